import { ApplyError, optionalString, requiredString } from '../../admin-framework/apply/apply-document.js';
import { ApplySectionProvider } from '../../admin-framework/apply/apply-section.js';
import { NamedListsSection } from '../../organizations/admin/organization-apply-section.js';
import { OrganizationsService } from '../../organizations/organizations.service.js';
import { ToolInputError, ToolsService } from '../tools.service.js';

/**
 * `organizations[].plugins: [{name, oauth}]` and `organizations[].tools: [{name, kind,
 * description, plugin, config}]`, matched by name within the organization. Plugins are written
 * first, so tools can name them (and pruned last: a plugin is deleted only once no kept tool can
 * name it). Runs before assistants, which name tools.
 */
@ApplySectionProvider()
export class ToolsApplySection extends NamedListsSection {
  constructor(organizations: OrganizationsService, tools: ToolsService) {
    super(organizations, {
      name: 'tools',
      order: 150,
      inputErrors: [ToolInputError],
      lists: [
        {
          list: 'plugins',
          kind: 'plugin',
          fields: ['name', 'oauth'],
          write: async (organizationId, entry, manager) => {
            const plugin = { name: requiredString(entry, 'name'), oauth: entry.value.oauth };
            const written = await tools.upsertPlugin(organizationId, plugin, manager);
            return { row: written.plugin, action: written.action };
          },
          remove: (...args) => tools.prunePluginsExcept(...args),
        },
        {
          list: 'tools',
          kind: 'tool',
          fields: ['name', 'kind', 'description', 'plugin', 'config'],
          exactNames: true,
          write: async (organizationId, entry, manager) => {
            if (entry.value.config === undefined) throw new ApplyError(`${entry.path}.config is required`);
            const { tool, action } = await tools.upsertTool(
              organizationId,
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
          },
          remove: (...args) => tools.pruneToolsExcept(...args),
        },
      ],
    });
  }
}
