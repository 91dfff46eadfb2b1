import { AdminUsageError, type AdminCommand } from '../../admin-framework/admin-command.js';
import {
  organizationListCommand,
  organizationRowCommand,
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

/** `tools <verb> <name> --org`: a command on one tool of the organization. */
const toolCommand = organizationRowCommand('<name>', async (organization, name, app) => {
  const tool = await app.get(ToolsService).find(organization.id, name);
  if (!tool) throw new AdminUsageError(`organization ${organization.slug} has no tool "${name}"`);
  return tool;
});

export const toolCommands: AdminCommand[] = [
  organizationListCommand({
    words: ['tools', 'list'],
    summary: "list an organization's server-side tools (declare them with apply -f)",
    list: (app, organizationId) => app.get(ToolsService).list(organizationId),
    view: toolView,
    columns: ['NAME', 'KIND', 'PLUGIN', 'TARGET', 'UPDATED'],
    cells: (t) => [t.name, t.kind, t.plugin?.name ?? '-', target(t), t.updatedAt.toISOString()],
  }),
  toolCommand({
    words: ['tools', 'show'],
    summary: 'show one tool with its plugin and configuration',
    run(tool) {
      const view = toolView(tool);
      return { json: view, text: JSON.stringify(view, null, 2) };
    },
  }),
  toolCommand({
    words: ['tools', 'delete'],
    summary: 'delete a tool; assistants and gateways that name it no longer get it',
    async run(tool, { app }, organization) {
      await app.get(ToolsService).delete(organization.id, tool.name);
      return {
        json: { ...toolView(tool), deleted: true },
        text: `Deleted tool ${tool.name} (${tool.kind}, id ${tool.id}) of ${organization.slug}.`,
      };
    },
  }),
];
