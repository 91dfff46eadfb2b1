import { AdminUsageError, type AdminCommand } from '../../admin-framework/admin-command.js';
import {
  ORGANIZATION_OPTION,
  organizationOf,
  organizationListCommand,
} from '../../organizations/admin/organizations.commands.js';
import type { ToolEntity } from '../entities/tool.entity.js';
import { ToolsService } from '../tools.service.js';

/** The `--json` shape; configs hold environment variable names, never secret values. */
export function toolView(tool: ToolEntity) {
  return {
    id: tool.id,
    organizationId: tool.organizationId,
    name: tool.name,
    kind: tool.kind,
    description: tool.description,
    plugin: tool.plugin ? { id: tool.plugin.id, name: tool.plugin.name, oauth: tool.plugin.oauth } : null,
    config: tool.config,
    createdAt: tool.createdAt.toISOString(),
    updatedAt: tool.updatedAt.toISOString(),
  };
}

/** Where a tool sends requests, for the table. */
function target(tool: ToolEntity): string {
  const config = tool.config as { url?: string; urlTemplate?: string; baseUrl?: string; provider?: string };
  if (tool.kind === 'web_search') return `${config.provider ?? ''} ${config.baseUrl ?? ''}`.trim();
  return config.urlTemplate ?? config.url ?? '';
}

async function requireTool(tools: ToolsService, organizationId: string, slug: string, name: string) {
  const tool = await tools.find(organizationId, name);
  if (!tool) throw new AdminUsageError(`organization ${slug} has no tool "${name}"`);
  return tool;
}

export const toolCommands: AdminCommand[] = [
  organizationListCommand({
    words: ['tools', 'list'],
    summary: "list an organization's server-side tools (declare them with apply -f)",
    list: (app, organizationId) => app.get(ToolsService).list(organizationId),
    view: toolView,
    columns: ['NAME', 'KIND', 'PLUGIN', 'TARGET', 'UPDATED'],
    cells: (t) => [t.name, t.kind, t.plugin?.name ?? '-', target(t), t.updatedAt.toISOString()],
  }),
  {
    words: ['tools', 'show'],
    summary: 'show one tool with its plugin and configuration',
    args: ['<name>'],
    options: { ...ORGANIZATION_OPTION },
    async run({ app, options, args }) {
      const organization = await organizationOf({ app, options });
      const tool = await requireTool(app.get(ToolsService), organization.id, organization.slug, args[0]);
      const view = toolView(tool);
      return { json: view, text: JSON.stringify(view, null, 2) };
    },
  },
  {
    words: ['tools', 'delete'],
    summary: 'delete a tool; assistants and gateways that name it no longer get it',
    args: ['<name>'],
    options: { ...ORGANIZATION_OPTION },
    async run({ app, options, args }) {
      const organization = await organizationOf({ app, options });
      const tools = app.get(ToolsService);
      const tool = await requireTool(tools, organization.id, organization.slug, args[0]);
      await tools.delete(organization.id, tool.name);
      return {
        json: { ...toolView(tool), deleted: true },
        text: `Deleted tool ${tool.name} (${tool.kind}, id ${tool.id}) of ${organization.slug}.`,
      };
    },
  },
];
