/**
 * Organizations named by a token's groups. Groups come as full paths (`/acme/engineering`, with
 * Keycloak's "Full group path" on); the organization is the first segment. An entry without the
 * leading slash is a bare group name, which says nothing about where the group sits, so it names
 * no organization.
 */
export function organizationsOfGroups(groups: readonly string[]): string[] {
  const organizations = new Set<string>();
  for (const group of groups) {
    if (!group.startsWith('/')) continue;
    const first = group.split('/')[1];
    if (first) organizations.add(first);
  }
  return [...organizations];
}

/**
 * The value of a claim by name; a dotted name (`realm_access.groups`) reaches a nested object
 * when no top-level claim has that exact name.
 */
export function claimAt(payload: Readonly<Record<string, unknown>>, name: string): unknown {
  if (Object.hasOwn(payload, name)) return payload[name];
  let value: unknown = payload;
  for (const part of name.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    if (!Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** A groups claim as a list of strings: an array of strings, or one string; otherwise undefined. */
export function groupList(value: unknown): string[] | undefined {
  if (typeof value === 'string') return [value];
  if (!Array.isArray(value)) return undefined;
  const groups = value.filter((item): item is string => typeof item === 'string');
  return groups.length === value.length ? groups : undefined;
}
