import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import {
  ApplyError,
  assertUnique,
  entriesAt,
  requiredString,
  rootEntry,
  type ApplyDocument,
  type DocumentEntry,
} from '../admin/apply/apply-document.js';
import type { ApplyReport } from '../admin/apply/apply-report.js';
import { ApplySectionProvider, type ApplySection } from '../admin/apply/apply-section.js';
import { OrganizationsService } from '../organizations/organizations.service.js';
import { GatewayInputError, McpGatewaysService } from './mcp-gateways.service.js';

/**
 * `organizations[].gateways: [{name, tools: [toolName, …] | ['*']}]`, matched by name (global:
 * the URL carries only the name). `tools` replaces the exposed list; omitted, it is empty.
 */
@Injectable()
@ApplySectionProvider()
export class GatewaysApplySection implements ApplySection {
  readonly name = 'gateways';
  /** After the organizations (100) and the tools a gateway names. */
  readonly order = 400;
  readonly keys = [
    'organizations[].gateways',
    'organizations[].gateways[].name',
    'organizations[].gateways[].tools',
  ];

  constructor(
    private readonly organizations: OrganizationsService,
    private readonly gateways: McpGatewaysService,
  ) {}

  async apply(document: ApplyDocument, manager: EntityManager, report: ApplyReport): Promise<void> {
    const organizationEntries = entriesAt(rootEntry(document), 'organizations');
    // Names are global, so a name declared twice anywhere in the file is a mistake.
    assertUnique(
      organizationEntries.flatMap((entry) => entriesAt(entry, 'gateways')),
      'name',
      (entry) => requiredString(entry, 'name'),
    );
    for (const organizationEntry of organizationEntries) {
      const entries = entriesAt(organizationEntry, 'gateways');
      if (entries.length === 0) continue;
      const slug = requiredString(organizationEntry, 'slug');
      const organization = await this.organizations.findBySlug(slug, manager);
      if (!organization) throw new ApplyError(`${organizationEntry.path}: organization "${slug}" not found`);
      for (const entry of entries) {
        try {
          const { gateway, action } = await this.gateways.upsertByName(
            organization.id,
            { name: requiredString(entry, 'name'), toolNames: toolNames(entry) },
            manager,
          );
          report.record({ kind: 'gateway', key: `${slug}/${gateway.name}`, id: gateway.id, action });
        } catch (error) {
          if (error instanceof GatewayInputError) throw new ApplyError(`${entry.path}: ${error.message}`);
          throw error;
        }
      }
    }
  }
}

function toolNames(entry: DocumentEntry): string[] {
  const value = entry.value.tools;
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((item): item is string => typeof item === 'string')) {
    throw new ApplyError(`${entry.path}.tools must be a list of tool names`);
  }
  return value;
}
