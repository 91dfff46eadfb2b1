import type { EntityManager } from 'typeorm';
import {
  ApplyError,
  assertUnique,
  entriesAt,
  requiredString,
  rootEntry,
} from '../admin-framework/apply/apply-document.js';
import type { ApplyDocument, DocumentEntry } from '../admin-framework/apply/apply-document.js';
import type { ApplyReport } from '../admin-framework/apply/apply-report.js';
import { ApplySectionProvider } from '../admin-framework/apply/apply-section.js';
import { NamedListsSection } from '../organizations/admin/organization-apply-section.js';
import { OrganizationsService } from '../organizations/organizations.service.js';
import { GatewayInputError, McpGatewaysService } from './mcp-gateways.service.js';

/**
 * `organizations[].gateways: [{name, tools: [toolName, …] | ['*']}]`, matched by name (global:
 * the URL carries only the name). `tools` replaces the exposed list; omitted, it is empty.
 * After the organizations (100) and the tools a gateway names.
 */
@ApplySectionProvider()
export class GatewaysApplySection extends NamedListsSection {
  constructor(organizations: OrganizationsService, gateways: McpGatewaysService) {
    super(organizations, {
      name: 'gateways',
      order: 400,
      inputErrors: [GatewayInputError],
      lists: [
        {
          list: 'gateways',
          kind: 'gateway',
          fields: ['name', 'tools'],
          exactNames: true,
          write: async (organizationId, entry, manager) => {
            const declared = { name: requiredString(entry, 'name'), toolNames: toolNames(entry) };
            const { gateway, action } = await gateways.upsertByName(organizationId, declared, manager);
            return { row: gateway, action };
          },
          remove: (...args) => gateways.pruneExcept(...args),
        },
      ],
    });
  }

  override async apply(document: ApplyDocument, manager: EntityManager, report: ApplyReport): Promise<void> {
    // Names are global, so a name declared twice anywhere in the file is a mistake.
    assertUnique(
      entriesAt(rootEntry(document), 'organizations').flatMap((entry) => entriesAt(entry, 'gateways')),
      'name',
      (entry) => requiredString(entry, 'name'),
    );
    await super.apply(document, manager, report);
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
