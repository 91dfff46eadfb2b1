import type { Request, Response } from 'express';
import type { AppConfig } from '../config/app-config.js';
import { ApiError } from '../common/errors/error-catalogue.js';

/** Headers a browser-based MCP client must be able to read (the auth challenge above all). */
const EXPOSED_HEADERS = 'WWW-Authenticate, Mcp-Session-Id, Mcp-Protocol-Version';
const ALLOWED_REQUEST_HEADERS =
  'Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID';

/**
 * The MCP transport's DNS-rebinding defence: a request from a browser page (it carries `Origin`)
 * is served only when that origin is listed in MCP_ALLOWED_ORIGINS or is PUBLIC_ADMIN_ORIGIN;
 * desktop clients send no `Origin` and pass. Allowed origins also get the CORS headers.
 */
export function enforceOrigin(config: AppConfig, req: Request, res: Response): void {
  const origin = req.headers.origin;
  if (origin === undefined) return;
  const allowed =
    config.mcpGateway.allowedOrigins.includes(origin) || origin === config.mcpGateway.publicAdminOrigin;
  if (!allowed) {
    throw new ApiError('origin_not_allowed', 'Requests from this Origin are not allowed by the MCP gateway');
  }
  res.setHeader('Access-Control-Allow-Origin', origin);
  res.setHeader('Vary', 'Origin');
  res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
}

/** Answers a CORS preflight for the MCP endpoint (after `enforceOrigin` accepted the origin). */
export function preflightHeaders(res: Response): void {
  res.setHeader('Access-Control-Allow-Methods', 'POST');
  res.setHeader('Access-Control-Allow-Headers', ALLOWED_REQUEST_HEADERS);
  res.setHeader('Access-Control-Max-Age', '600');
}
