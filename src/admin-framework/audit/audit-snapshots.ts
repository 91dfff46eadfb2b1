import type { EntityManager } from 'typeorm';

/**
 * Where each kind of resource `apply` reports lives, so its audit rows can carry the row as it
 * was and as it is (`apply` writes through the features' services, which this folder never
 * imports; the tables are the stable contract). Every one of them has `organization_id` but
 * organizations themselves.
 */
const TABLES: Readonly<Record<string, string>> = {
  organization: 'organizations',
  assistant: 'assistants',
  specialist: 'specialists',
  tool: 'tools',
  plugin: 'plugins',
  gateway: 'mcp_gateways',
  'api key': 'api_keys',
};

/** Rows by id, as JSON (snake_case columns); redacted by auditSnapshot when written. */
export type RowSnapshot = Map<string, unknown>;

/** Every audited row of the organizations with these slugs, read inside `manager`'s transaction. */
export async function snapshotOrganizations(
  manager: EntityManager,
  slugs: readonly string[],
): Promise<RowSnapshot> {
  const rows = new Map<string, unknown>();
  if (slugs.length === 0) return rows;
  const organizations: { id: string; row: unknown }[] = await manager.query(
    'SELECT id, to_jsonb(o) AS row FROM organizations o WHERE slug = ANY($1::text[])',
    [slugs],
  );
  for (const { id, row } of organizations) rows.set(id, row);
  const ids = organizations.map(({ id }) => id);
  if (ids.length === 0) return rows;
  for (const table of new Set(Object.values(TABLES))) {
    if (table === 'organizations') continue;
    const owned: { id: string; row: unknown }[] = await manager.query(
      `SELECT id, to_jsonb(t) AS row FROM ${table} t WHERE organization_id = ANY($1::uuid[])`,
      [ids],
    );
    for (const { id, row } of owned) rows.set(id, row);
  }
  return rows;
}

/** One resource as it is now (inside the transaction); null when it is gone or of an unknown kind. */
export async function snapshotRow(manager: EntityManager, kind: string, id: string): Promise<unknown> {
  const table = TABLES[kind];
  if (!table) return null;
  const rows: { row: unknown }[] = await manager.query(
    `SELECT to_jsonb(t) AS row FROM ${table} t WHERE id = $1::uuid`,
    [id],
  );
  return rows[0]?.row ?? null;
}
