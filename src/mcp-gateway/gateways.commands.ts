import type { INestApplicationContext } from '@nestjs/common';
import { AdminUsageError, stringOption, type AdminCommand } from '../admin-framework/admin-command.js';
import {
  ORGANIZATION_OPTION,
  organizationListCommand,
  organizationOf,
  organizationRowCommand,
} from '../organizations/admin/organizations.commands.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import type { McpGatewayEntity } from './entities/mcp-gateway.entity.js';
import { McpGatewaysService } from './mcp-gateways.service.js';

const TOOLS_OPTION = {
  tools: {
    type: 'string',
    placeholder: '<name,name…|*>',
    description: 'tools of the organization to expose, comma-separated; * for all of them',
  },
} as const;

/** The `--json` shape; `url` is what MCP clients are configured with (null until an origin is set). */
export function gatewayView(gateway: McpGatewayEntity, config: AppConfig) {
  const origin = config.mcpGateway.publicAdminOrigin ?? config.server.publicBaseUrl;
  return {
    id: gateway.id,
    organizationId: gateway.organizationId,
    name: gateway.name,
    tools: gateway.toolNames,
    url: origin ? `${origin}/mcp-gateway/${gateway.name}` : null,
    createdAt: gateway.createdAt.toISOString(),
    updatedAt: gateway.updatedAt.toISOString(),
  };
}

function toolList(value: string | undefined): string[] {
  return value === undefined ? [] : value.split(',');
}

function describe(gateway: McpGatewayEntity, config: AppConfig): string {
  const view = gatewayView(gateway, config);
  return [
    `Gateway ${view.name}`,
    `  id:           ${view.id}`,
    `  organization: ${view.organizationId}`,
    `  tools:        ${view.tools.length > 0 ? view.tools.join(', ') : '(none)'}`,
    `  url:          ${view.url ?? '(set PUBLIC_ADMIN_ORIGIN to know it)'}`,
    `  updated:      ${view.updatedAt}`,
  ].join('\n');
}

/** `gateways <verb> <name> --org`: a command on one gateway of the organization. */
const gatewayCommand = organizationRowCommand('<name>', async (organization, name, app) => {
  const gateway = await app.get(McpGatewaysService).find(organization.id, name);
  if (!gateway) throw new AdminUsageError(`organization ${organization.slug} has no gateway "${name}"`);
  return gateway;
});

function configOf(app: INestApplicationContext): AppConfig {
  return app.get<AppConfig>(APP_CONFIG);
}

export const gatewayCommands: AdminCommand[] = [
  {
    words: ['gateways', 'create'],
    summary: "create an MCP gateway exposing some of the organization's tools",
    options: {
      ...ORGANIZATION_OPTION,
      name: {
        type: 'string',
        placeholder: '<name>',
        required: true,
        description: 'the name in the URL /mcp-gateway/<name>; unique within the organization',
      },
      ...TOOLS_OPTION,
    },
    async run({ app, options }) {
      const organization = await organizationOf({ app, options });
      const gateway = await app.get(McpGatewaysService).create(organization.id, {
        name: stringOption(options, 'name') ?? '',
        toolNames: toolList(stringOption(options, 'tools')),
      });
      return {
        json: gatewayView(gateway, configOf(app)),
        text: `Created ${describe(gateway, configOf(app))}`,
      };
    },
  },
  organizationListCommand({
    words: ['gateways', 'list'],
    summary: "list an organization's MCP gateways",
    list: async (app, organizationId) =>
      (await app.get(McpGatewaysService).list(organizationId)).map((gateway) =>
        gatewayView(gateway, configOf(app)),
      ),
    view: (view) => view,
    columns: ['NAME', 'ID', 'TOOLS', 'URL'],
    cells: (v) => [v.name, v.id, v.tools.join(',') || '-', v.url ?? '-'],
  }),
  gatewayCommand({
    words: ['gateways', 'show'],
    summary: 'show one MCP gateway',
    run(gateway, context) {
      return {
        json: gatewayView(gateway, configOf(context.app)),
        text: describe(gateway, configOf(context.app)),
      };
    },
  }),
  gatewayCommand({
    words: ['gateways', 'update'],
    summary: 'replace the tools an MCP gateway exposes',
    options: { tools: { ...TOOLS_OPTION.tools, required: true } },
    async run(current, context) {
      const updated = await context.app.get(McpGatewaysService).update(current.organizationId, current.name, {
        toolNames: toolList(stringOption(context.options, 'tools')),
      });
      if (!updated) throw new AdminUsageError(`gateway "${current.name}" disappeared while being updated`);
      return {
        json: gatewayView(updated, configOf(context.app)),
        text: `Updated ${describe(updated, configOf(context.app))}`,
      };
    },
  }),
  gatewayCommand({
    words: ['gateways', 'delete'],
    summary: 'delete an MCP gateway (its URL stops answering at once)',
    async run(gateway, context) {
      await context.app.get(McpGatewaysService).delete(gateway.organizationId, gateway.name);
      return {
        json: { id: gateway.id, name: gateway.name, deleted: true },
        text: `Deleted gateway ${gateway.name} (${gateway.id})`,
      };
    },
  }),
];
