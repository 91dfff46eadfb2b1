import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiError } from '../common/errors/error-catalogue.js';
import { currentRequestContext } from '../common/logging/request-context.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import {
  IdentityProviderUnavailableError,
  TokenRejectedError,
  TokenVerifierService,
} from '../oidc/token-verifier.service.js';
import type { McpGatewayEntity } from './entities/mcp-gateway.entity.js';
import { gatewayUrls } from './gateway-urls.js';
import { McpGatewaysService } from './mcp-gateways.service.js';
import { enforceOrigin } from './origin-policy.js';

/** What the guard established, for the handler. */
export interface GatewayRequest {
  mcpGateway?: { gateway: McpGatewayEntity; subject: string | undefined };
}

/** RFC 6750 b64token after the scheme. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/**
 * The MCP gateway's own authentication (routes marked `@OwnAuthentication()`): the Origin
 * check, the gateway named in the path, then an OAuth access token of the gateway's
 * organization. The token is only verified here; nothing downstream receives it.
 */
@Injectable()
export class McpGatewayGuard implements CanActivate {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly gateways: McpGatewaysService,
    private readonly tokens: TokenVerifierService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<Request & GatewayRequest>();
    const res = context.switchToHttp().getResponse<Response>();
    enforceOrigin(this.config, req, res);
    const name = String(req.params.name);
    const gateway = await findGateway(this.tokens, this.gateways, name);

    const { metadata } = gatewayUrls(this.config, req, name);
    const challenge = (error?: string, description?: string) =>
      `Bearer resource_metadata="${metadata}"` +
      (error ? `, error="${error}", error_description="${quotable(description ?? '')}"` : '');

    const authorization = req.headers.authorization;
    if (authorization === undefined || authorization.trim() === '') {
      throw new ApiError('missing_token', 'Send an OAuth access token in Authorization: Bearer', {
        'WWW-Authenticate': challenge(),
      });
    }
    const token = BEARER.exec(authorization)?.[1];
    if (token === undefined) {
      const message = 'The Authorization header must be "Bearer <access token>"';
      throw new ApiError('invalid_token', message, {
        'WWW-Authenticate': challenge('invalid_token', message),
      });
    }

    let verified;
    try {
      verified = await this.tokens.verify(token);
    } catch (error) {
      if (error instanceof TokenRejectedError) {
        throw new ApiError('invalid_token', error.message, {
          'WWW-Authenticate': challenge('invalid_token', error.message),
        });
      }
      if (error instanceof IdentityProviderUnavailableError) {
        throw new ApiError(
          'identity_provider_unavailable',
          'The identity provider could not be reached to verify the token; retry shortly',
          { 'Retry-After': '5' },
        );
      }
      throw error;
    }

    const slug = gateway.organization?.slug;
    if (slug === undefined || !verified.organizations.includes(slug)) {
      const message = "The token's groups do not include the organization of this gateway";
      throw new ApiError('insufficient_scope', message, {
        'WWW-Authenticate': challenge('insufficient_scope', message),
      });
    }
    req.mcpGateway = { gateway, subject: verified.subject };
    const log = currentRequestContext();
    if (log) log.organizationId = gateway.organizationId;
    return true;
  }
}

/**
 * The gateway a path names, or 404 for an unknown name (and for every name while no identity
 * provider is configured, as no gateway can then authenticate anyone).
 */
export async function findGateway(
  tokens: TokenVerifierService,
  gateways: McpGatewaysService,
  name: string,
): Promise<McpGatewayEntity> {
  if (!tokens.enabled) {
    throw new ApiError('not_found', 'The MCP gateway is not enabled on this server (OIDC_ISSUER is unset)');
  }
  const gateway = await gateways.findForRequest(name);
  if (!gateway) throw new ApiError('not_found', 'No MCP gateway has this name');
  return gateway;
}

/** A value that can sit inside a quoted-string of an auth-param. */
function quotable(text: string): string {
  return text.replace(/["\\]/g, "'").replace(/[^\x20-\x7e]/g, ' ');
}
