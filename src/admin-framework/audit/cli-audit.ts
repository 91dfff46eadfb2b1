import { userInfo } from 'node:os';
import type { INestApplicationContext } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { AuditLogService, type AuditActor, type AuditChange } from './audit-log.service.js';
import { snapshotOrganizations, type RowSnapshot } from './audit-snapshots.js';

/** The CLI's caller: the operating-system user running it (whoever holds the database credentials). */
export function cliActor(): AuditActor {
  let user: string | undefined;
  try {
    user = userInfo().username;
  } catch {
    user = undefined;
  }
  return { type: 'cli', id: user || process.env.USER || 'unknown' };
}

/** What a CLI command names of organizations: `--org`, `orgs create --slug`, `orgs set-… <slug|id>`. */
export interface CliTarget {
  words: readonly string[];
  options: Readonly<Record<string, string | boolean | undefined>>;
  args: readonly string[];
}

function organizationReferences({ words, options, args }: CliTarget): string[] {
  if (words[0] === 'apply' || ['list', 'show'].includes(words[1] ?? '')) return [];
  const references = [options.org, options.slug, words[0] === 'orgs' ? args[0] : undefined];
  return references.filter((reference): reference is string => typeof reference === 'string');
}

/**
 * Runs one CLI command and audits what it changed in the organization it names (the commands
 * write through the features' services, without one transaction): the organization's rows are
 * read before and after, and every row created, changed or deleted gets an audit row with both
 * states, actor `cli`. `apply` audits itself, in its transaction; reading commands are not audited.
 */
export async function runAudited<T>(
  app: INestApplicationContext,
  target: CliTarget,
  run: () => Promise<T>,
): Promise<T> {
  const references = organizationReferences(target);
  if (references.length === 0) return run();
  const manager = app.get<DataSource>(getDataSourceToken()).manager;
  const before = await snapshotOrganizations(manager, references);
  try {
    return await run();
  } finally {
    const after = await snapshotOrganizations(manager, references);
    const changes = differences(before, after);
    if (changes.length > 0) await app.get(AuditLogService).record(undefined, cliActor(), changes);
  }
}

function differences(before: RowSnapshot, after: RowSnapshot): AuditChange[] {
  const changes: AuditChange[] = [];
  for (const id of new Set([...before.keys(), ...after.keys()])) {
    const was = before.get(id);
    const is = after.get(id);
    if (was && is && JSON.stringify(was.row) === JSON.stringify(is.row)) continue;
    const kind = (is ?? was)!.kind;
    const row = (is ?? was)!.row as { organization_id?: string; revoked_at?: string | null };
    const revoked = kind === 'api key' && was && is && !(was.row as typeof row).revoked_at && row.revoked_at;
    changes.push({
      organizationId: kind === 'organization' ? id : (row.organization_id ?? null),
      action: !was ? 'created' : !is ? 'deleted' : revoked ? 'revoked' : 'updated',
      resourceType: kind,
      resourceId: id,
      before: was?.row ?? null,
      after: is?.row ?? null,
    });
  }
  return changes;
}
