import type { EntityManager } from 'typeorm';
import {
  ApplyError,
  assertUnique,
  entriesAt,
  requiredString,
  rootEntry,
  type ApplyDocument,
  type DocumentEntry,
} from '../admin-framework/apply/apply-document.js';
import type { ApplyReport } from '../admin-framework/apply/apply-report.js';
import { ApplySectionProvider, claimKeys } from '../admin-framework/apply/apply-section.js';
import {
  OrganizationApplySection,
  type OrganizationInFile,
} from '../organizations/admin/organization-apply-section.js';
import { OrganizationsService } from '../organizations/organizations.service.js';
import { GatewayInputError, McpGatewaysService } from './mcp-gateways.service.js';

/**
 * `organizations[].gateways: [{name, tools: [toolName, …] | ['*']}]`, matched by name (global:
 * the URL carries only the name). `tools` replaces the exposed list; omitted, it is empty.
 */
@ApplySectionProvider()
export class GatewaysApplySection extends OrganizationApplySection {
  readonly name = 'gateways';
  /** After the organizations (100) and the tools a gateway names. */
  readonly order = 400;
  readonly keys = claimKeys('organizations[].gateways', ['name', 'tools']);
  protected readonly inputErrors = [GatewayInputError];
  protected readonly lists = ['gateways'];

  constructor(
    organizations: OrganizationsService,
    private readonly gateways: McpGatewaysService,
  ) {
    super(organizations);
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

  protected async applyTo(target: OrganizationInFile): Promise<void> {
    await this.writeEach(target, entriesAt(target.entry, 'gateways'), 'gateway', (entry) =>
      this.gateways
        .upsertByName(
          target.organization.id,
          { name: requiredString(entry, 'name'), toolNames: toolNames(entry) },
          target.manager,
        )
        .then(({ gateway, action }) => ({ row: gateway, action })),
    );
  }

  async prune(document: ApplyDocument, manager: EntityManager, report: ApplyReport): Promise<void> {
    await this.pruneLists(document, manager, report, [
      { list: 'gateways', kind: 'gateway', remove: (...args) => this.gateways.pruneExcept(...args) },
    ]);
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
