import { Injectable } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { EntityManager } from 'typeorm';
import { TransactionalConnection } from '../../database/transactional-connection.js';
import { AuditLogService, type AuditActor, type AuditChange } from '../audit/audit-log.service.js';
import { snapshotOrganizations, snapshotRow, type RowSnapshot } from '../audit/audit-snapshots.js';
import { ApplyError, unclaimedKeys, type ApplyDocument } from './apply-document.js';
import { ApplyReport } from './apply-report.js';
import { ApplySectionMarker, type ApplySection } from './apply-section.js';
import { ApplyRepository } from './apply.repository.js';

/** Thrown inside the transaction to roll a dry run back; never escapes `apply`. */
class DryRunRollback extends Error {}

/**
 * Applies a declarative configuration: every discovered section, in order, in ONE transaction,
 * so a file either applies entirely or changes nothing. Idempotent: items are matched by their
 * natural keys (organization slug, assistant name) and written only when they differ.
 */
@Injectable()
export class ApplyService {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly repository: ApplyRepository,
    private readonly connection: TransactionalConnection,
    private readonly audit: AuditLogService,
  ) {}

  sections(): ApplySection[] {
    const instances = this.discovery
      .getProviders({ metadataKey: ApplySectionMarker.KEY })
      .map((wrapper) => wrapper.instance as ApplySection | undefined)
      .filter((instance): instance is ApplySection => instance !== undefined);
    const sections = [...new Set(instances)].sort((a, b) => a.order - b.order);
    const owners = new Map<string, string>();
    for (const section of sections) {
      for (const key of section.keys) {
        const owner = owners.get(key);
        // A programming error, not a file error: two modules would both write the same thing.
        if (owner) throw new Error(`apply sections ${owner} and ${section.name} both claim ${key}`);
        owners.set(key, section.name);
      }
    }
    return sections;
  }

  /**
   * With `audit`, every created, updated or deleted item gets an audit row naming that actor, with
   * the row as it was and as it is, written in the same transaction: a failed audit write rolls
   * the whole apply back. `beforeCommit` runs last inside the transaction, with the report.
   */
  async apply(
    document: ApplyDocument,
    options: {
      dryRun?: boolean;
      prune?: boolean;
      audit?: AuditActor;
      beforeCommit?: (manager: EntityManager, report: ApplyReport) => Promise<void>;
    } = {},
  ): Promise<ApplyReport> {
    const sections = this.sections();
    const unknown = unclaimedKeys(document, new Set(sections.flatMap((section) => section.keys)));
    if (unknown.length > 0) {
      throw new ApplyError(`unknown ${unknown.length === 1 ? 'key' : 'keys'}: ${unknown.join(', ')}`);
    }
    const report = new ApplyReport();
    try {
      await this.connection.withTransaction(async (manager) => {
        await this.repository.lockForTransaction(manager);
        const before = options.audit ? await snapshotOrganizations(manager, declaredSlugs(document)) : null;
        for (const section of sections) await section.apply(document, manager, report);
        if (options.prune) {
          // Dependents first: specialists before their assistants, gateways before the tools they expose.
          for (const section of [...sections].reverse()) await section.prune?.(document, manager, report);
        }
        if (options.audit && before) {
          await this.audit.record(manager, options.audit, await auditChanges(manager, report, before));
        }
        await options.beforeCommit?.(manager, report);
        if (options.dryRun) throw new DryRunRollback();
      });
    } catch (error) {
      if (!(error instanceof DryRunRollback)) throw error;
    }
    return report;
  }
}

/** The slugs of the document's `organizations[]` entries (the only ones `apply` may change). */
function declaredSlugs(document: ApplyDocument): string[] {
  const entries = Array.isArray(document.organizations) ? (document.organizations as unknown[]) : [];
  return entries
    .map((entry) =>
      typeof entry === 'object' && entry !== null ? (entry as { slug?: unknown }).slug : undefined,
    )
    .filter((slug): slug is string => typeof slug === 'string');
}

/** One audit change per item the apply created, updated or deleted, with its rows before and after. */
async function auditChanges(
  manager: EntityManager,
  report: ApplyReport,
  before: RowSnapshot,
): Promise<AuditChange[]> {
  const changes: AuditChange[] = [];
  for (const change of report.changes) {
    if (change.action === 'unchanged') continue;
    const was = change.action === 'created' ? null : (before.get(change.id)?.row ?? null);
    const is = change.action === 'deleted' ? null : await snapshotRow(manager, change.kind, change.id);
    const owner = (row: unknown) => (row as { organization_id?: string } | null)?.organization_id;
    changes.push({
      organizationId: change.kind === 'organization' ? change.id : (owner(is) ?? owner(was) ?? null),
      action: change.action,
      resourceType: change.kind,
      resourceId: change.id,
      before: was,
      after: is,
    });
  }
  return changes;
}
