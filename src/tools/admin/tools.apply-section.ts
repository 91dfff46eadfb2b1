import {
  ApplyError,
  assertUnique,
  entriesAt,
  optionalString,
  requiredString,
} from '../../admin-framework/apply/apply-document.js';
import { ApplySectionProvider, claimKeys } from '../../admin-framework/apply/apply-section.js';
import {
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
  protected readonly lists = ['plugins', 'tools'];

  constructor(
    organizations: OrganizationsService,
    private readonly tools: ToolsService,
  ) {
    super(organizations);
  }

  protected async applyTo(target: OrganizationInFile): Promise<void> {
    const { entry: organizationEntry, organization, manager } = target;
    const plugins = entriesAt(organizationEntry, 'plugins');
    const tools = entriesAt(organizationEntry, 'tools');
    assertUnique(plugins, 'name', (entry) => requiredString(entry, 'name').trim());
    assertUnique(tools, 'name', (entry) => requiredString(entry, 'name'));
    await this.writeEach(target, plugins, 'plugin', (entry) =>
      this.tools
        .upsertPlugin(
          organization.id,
          { name: requiredString(entry, 'name'), oauth: entry.value.oauth },
          manager,
        )
        .then(({ plugin, action }) => ({ row: plugin, action })),
    );
    await this.writeEach(target, tools, 'tool', async (entry) => {
      if (entry.value.config === undefined) throw new ApplyError(`${entry.path}.config is required`);
      const { tool, action } = await this.tools.upsertTool(
        organization.id,
        {
          name: requiredString(entry, 'name'),
          kind: requiredString(entry, 'kind'),
          config: entry.value.config,
          description: optionalString(entry, 'description'),
          plugin: entry.value.plugin === null ? null : optionalString(entry, 'plugin'),
        },
        manager,
      );
      return { row: tool, action };
    });
  }

  async prune(document: ApplyDocument, manager: EntityManager, report: ApplyReport): Promise<void> {
    // Tools first: a plugin is deleted only once no kept tool can name it.
    await this.pruneLists(document, manager, report, [
      { list: 'tools', kind: 'tool', remove: (...args) => this.tools.pruneToolsExcept(...args) },
      { list: 'plugins', kind: 'plugin', remove: (...args) => this.tools.prunePluginsExcept(...args) },
    ]);
  }
}
