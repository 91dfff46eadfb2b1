import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import {
  ApplyError,
  assertUnique,
  entriesAt,
  optionalString,
  requiredString,
  rootEntry,
  type ApplyDocument,
  type DocumentEntry,
} from '../../admin/apply/apply-document.js';
import type { ApplyReport } from '../../admin/apply/apply-report.js';
import { ApplySectionProvider, type ApplySection } from '../../admin/apply/apply-section.js';
import { OrganizationsService } from '../../organizations/organizations.service.js';
import { ToolInputError, ToolsService } from '../tools.service.js';

/**
 * `organizations[].plugins: [{name, oauth}]` and `organizations[].tools: [{name, kind,
 * description, plugin, config}]`, matched by name within the organization. Plugins are written
 * first, so tools can name them. Runs before assistants, which name tools.
 */
@Injectable()
@ApplySectionProvider()
export class ToolsApplySection implements ApplySection {
  readonly name = 'tools';
  readonly order = 150;
  readonly keys = [
    'organizations[].plugins',
    'organizations[].plugins[].name',
    'organizations[].plugins[].oauth',
    'organizations[].tools',
    'organizations[].tools[].name',
    'organizations[].tools[].kind',
    'organizations[].tools[].description',
    'organizations[].tools[].plugin',
    'organizations[].tools[].config',
  ];

  constructor(
    private readonly organizations: OrganizationsService,
    private readonly tools: ToolsService,
  ) {}

  async apply(document: ApplyDocument, manager: EntityManager, report: ApplyReport): Promise<void> {
    for (const organizationEntry of entriesAt(rootEntry(document), 'organizations')) {
      const plugins = entriesAt(organizationEntry, 'plugins');
      const tools = entriesAt(organizationEntry, 'tools');
      if (plugins.length === 0 && tools.length === 0) continue;
      const slug = requiredString(organizationEntry, 'slug');
      const organization = await this.organizations.findBySlug(slug, manager);
      if (!organization) throw new ApplyError(`${organizationEntry.path}: organization "${slug}" not found`);
      assertUnique(plugins, 'name', (entry) => requiredString(entry, 'name').trim());
      assertUnique(tools, 'name', (entry) => requiredString(entry, 'name'));
      for (const entry of plugins) {
        await this.inEntry(entry, async () => {
          const { plugin, action } = await this.tools.upsertPlugin(
            organization.id,
            { name: requiredString(entry, 'name'), oauth: entry.value.oauth },
            manager,
          );
          report.record({ kind: 'plugin', key: `${slug}/${plugin.name}`, id: plugin.id, action });
        });
      }
      for (const entry of tools) {
        await this.inEntry(entry, async () => {
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
          report.record({ kind: 'tool', key: `${slug}/${tool.name}`, id: tool.id, action });
        });
      }
    }
  }

  private async inEntry(entry: DocumentEntry, work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (error) {
      if (error instanceof ToolInputError) throw new ApplyError(`${entry.path}: ${error.message}`);
      throw error;
    }
  }
}
