import { Injectable } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { TransactionalConnection } from '../../database/transactional-connection.js';
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

  async apply(
    document: ApplyDocument,
    options: { dryRun?: boolean; prune?: boolean } = {},
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
        for (const section of sections) await section.apply(document, manager, report);
        if (options.prune) {
          // Dependents first: specialists before their assistants, gateways before the tools they expose.
          for (const section of [...sections].reverse()) await section.prune?.(document, manager, report);
        }
        if (options.dryRun) throw new DryRunRollback();
      });
    } catch (error) {
      if (!(error instanceof DryRunRollback)) throw error;
    }
    return report;
  }
}
