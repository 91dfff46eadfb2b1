import type { Request } from 'express';
import type { AppConfig } from '../config/app-config.js';

export interface GatewayUrls {
  /** The gateway as MCP clients are configured with it: the Protected Resource Metadata `resource`. */
  resource: string;
  /** The metadata document, inside `/mcp-gateway/*` so the admin origin's one proxy rule covers it. */
  metadata: string;
}

/**
 * Absolute URLs of a gateway on the origin MCP clients use: PUBLIC_ADMIN_ORIGIN (which proxies
 * `/mcp-gateway/*` to the backend), else PUBLIC_BASE_URL, else the origin the request came to.
 */
export function gatewayUrls(config: AppConfig, req: Request, name: string): GatewayUrls {
  const origin =
    config.mcpGateway.publicAdminOrigin ?? config.server.publicBaseUrl ?? `${req.protocol}://${req.host}`;
  const resource = `${origin}/mcp-gateway/${name}`;
  return { resource, metadata: `${resource}/.well-known/oauth-protected-resource` };
}
