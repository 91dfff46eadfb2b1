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

/** A stored row as JSON (snake_case columns; redacted by auditSnapshot when written) and its kind. */
export interface SnapshotRow {
  kind: string;
  row: unknown;
}

/** Rows by id. */
export type RowSnapshot = Map<string, SnapshotRow>;

/**
 * Every audited row of the organizations these references name (slugs or ids), read inside
 * `manager`'s transaction when one is given.
 */
export async function snapshotOrganizations(
  manager: EntityManager,
  references: readonly string[],
): Promise<RowSnapshot> {
  const rows: RowSnapshot = new Map();
  if (references.length === 0) return rows;
  const organizations: { id: string; row: unknown }[] = await manager.query(
    'SELECT id, to_jsonb(o) AS row FROM organizations o WHERE slug = ANY($1::text[]) OR id::text = ANY($1::text[])',
    [references],
  );
  for (const { id, row } of organizations) rows.set(id, { kind: 'organization', row });
  const ids = organizations.map(({ id }) => id);
  if (ids.length === 0) return rows;
  for (const [kind, table] of Object.entries(TABLES)) {
    if (table === 'organizations') continue;
    const owned: { id: string; row: unknown }[] = await manager.query(
      `SELECT id, to_jsonb(t) AS row FROM ${table} t WHERE organization_id = ANY($1::uuid[])`,
      [ids],
    );
    for (const { id, row } of owned) rows.set(id, { kind, row });
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
