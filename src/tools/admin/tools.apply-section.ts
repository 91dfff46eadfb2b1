import {
  ApplyError,
  assertUnique,
  entriesAt,
  optionalString,
  requiredString,
  type DocumentEntry,
} from '../../admin-framework/apply/apply-document.js';
import { ApplySectionProvider, claimKeys } from '../../admin-framework/apply/apply-section.js';
import {
  declaredNames,
  OrganizationApplySection,
  type OrganizationInFile,
} from '../../organizations/admin/organization-apply-section.js';
import { OrganizationsService } from '../../organizations/organizations.service.js';
import { ToolInputError, ToolsService } from '../tools.service.js';
import type { ApplyDocument } from '../../admin-framework/apply/apply-document.js';
import type { ApplyReport } from '../../admin-framework/apply/apply-report.js';
import type { EntityManager } from 'typeorm';

/**
 * `organizations[].plugins: [{name, oauth}]` and `organizations[].tools: [{name, kind,
 * description, plugin, config}]`, matched by name within the organization. Plugins are written
 * first, so tools can name them. Runs before assistants, which name tools.
 */
@ApplySectionProvider()
export class ToolsApplySection extends OrganizationApplySection {
  readonly name = 'tools';
  readonly order = 150;
  readonly keys = [
    ...claimKeys('organizations[].plugins', ['name', 'oauth']),
    ...claimKeys('organizations[].tools', ['name', 'kind', 'description', 'plugin', 'config']),
  ];
  protected readonly inputErrors = [ToolInputError];

  constructor(
    organizations: OrganizationsService,
    private readonly tools: ToolsService,
  ) {
    super(organizations);
  }

  protected declares(organizationEntry: DocumentEntry): boolean {
    return (
      entriesAt(organizationEntry, 'plugins').length > 0 || entriesAt(organizationEntry, 'tools').length > 0
    );
  }

  protected async applyTo(target: OrganizationInFile): Promise<void> {
    const { entry: organizationEntry, slug, organization, manager, report } = target;
    const plugins = entriesAt(organizationEntry, 'plugins');
    const tools = entriesAt(organizationEntry, 'tools');
    assertUnique(plugins, 'name', (entry) => requiredString(entry, 'name').trim());
    assertUnique(tools, 'name', (entry) => requiredString(entry, 'name'));
    for (const entry of plugins) {
      const { plugin, action } = await this.inEntry(entry, () =>
        this.tools.upsertPlugin(
          organization.id,
          { name: requiredString(entry, 'name'), oauth: entry.value.oauth },
          manager,
        ),
      );
      report.record({ kind: 'plugin', key: `${slug}/${plugin.name}`, id: plugin.id, action });
    }
    for (const entry of tools) {
      if (entry.value.config === undefined) throw new ApplyError(`${entry.path}.config is required`);
      const { tool, action } = await this.inEntry(entry, () =>
        this.tools.upsertTool(
          organization.id,
          {
            name: requiredString(entry, 'name'),
            kind: requiredString(entry, 'kind'),
            config: entry.value.config,
            description: optionalString(entry, 'description'),
            plugin: entry.value.plugin === null ? null : optionalString(entry, 'plugin'),
          },
          manager,
        ),
      );
      report.record({ kind: 'tool', key: `${slug}/${tool.name}`, id: tool.id, action });
    }
  }

  async prune(document: ApplyDocument, manager: EntityManager, report: ApplyReport): Promise<void> {
    await this.eachStatedList(
      document,
      'tools',
      manager,
      report,
      async ({ slug, organization }, declared) => {
        for (const deleted of await this.tools.pruneToolsExcept(
          organization.id,
          declaredNames(declared),
          manager,
        )) {
          report.record({ kind: 'tool', key: `${slug}/${deleted.name}`, id: deleted.id, action: 'deleted' });
        }
      },
    );
    await this.eachStatedList(
      document,
      'plugins',
      manager,
      report,
      async ({ slug, organization }, declared) => {
        for (const deleted of await this.tools.prunePluginsExcept(
          organization.id,
          declaredNames(declared),
          manager,
        )) {
          report.record({
            kind: 'plugin',
            key: `${slug}/${deleted.name}`,
            id: deleted.id,
            action: 'deleted',
          });
        }
      },
    );
  }
}
