import type { ApiKeyEntity } from '../api-keys/entities/api-key.entity.js';
import type { AssistantEntity } from '../assistants/entities/assistant.entity.js';
import type { OrganizationEntity } from '../organizations/entities/organization.entity.js';

/** The `--json` shapes. Listed field by field so that a new column is never printed by accident. */
export function organizationView(organization: OrganizationEntity) {
  return {
    id: organization.id,
    slug: organization.slug,
    name: organization.name,
    rateLimitPerMinute: organization.rateLimitPerMinute,
    createdAt: organization.createdAt.toISOString(),
  };
}

/** Never the secret nor its hash. */
export function apiKeyView(key: ApiKeyEntity) {
  return {
    id: key.id,
    organizationId: key.organizationId,
    name: key.name,
    hint: key.hint,
    scopes: key.scopes,
    legacy: key.legacy,
    createdAt: key.createdAt.toISOString(),
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    revokedAt: key.revokedAt?.toISOString() ?? null,
  };
}

export function assistantView(assistant: AssistantEntity) {
  return {
    id: assistant.id,
    organizationId: assistant.organizationId,
    name: assistant.name,
    instructions: assistant.instructions,
    model: assistant.model,
    tools: assistant.toolNames,
    createdAt: assistant.createdAt.toISOString(),
    updatedAt: assistant.updatedAt.toISOString(),
  };
}

/** A plain aligned table for human output; empty lists say so. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  if (rows.length === 0) return '(none)';
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => row[column].length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column]))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

export function rateLimitText(perMinute: number | null): string {
  return perMinute === null ? 'default' : `${perMinute}/min`;
}
