import { ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import type { Request, Response } from 'express';
import { ApiError } from '../common/errors/error-catalogue.js';
import { currentRequestContext } from '../common/logging/request-context.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import {
  explainTokenFailure,
  gatewayAudiences,
  IdentityProviderUnavailableError,
  OIDC_JWT_STRATEGY,
  TokenRejectedError,
  TokenVerifierService,
  type VerifiedAccessToken,
} from '../oidc/token-verifier.service.js';
import type { McpGatewayEntity } from './entities/mcp-gateway.entity.js';
import { gatewayUrls } from './gateway-urls.js';
import { McpGatewaysService } from './mcp-gateways.service.js';
import { enforceOrigin } from './origin-policy.js';

/** What the guard established, for the handler. */
export interface GatewayRequest {
  mcpGateway?: { gateway: McpGatewayEntity; subject: string | undefined };
  /** The verified token, where passport puts it (`property` below). */
  oidcToken?: VerifiedAccessToken;
}

/**
 * The MCP gateway's own authentication (routes marked `@OwnAuthentication()`): the Origin
 * check, the gateway named in the path, then an OAuth access token of the gateway's
 * organization, verified by the `oidc-jwt` passport strategy. The token is only verified here;
 * nothing downstream receives it.
 */
@Injectable()
export class McpGatewayGuard extends AuthGuard(OIDC_JWT_STRATEGY) {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly gateways: McpGatewaysService,
    private readonly tokens: TokenVerifierService,
  ) {
    super();
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<Request & GatewayRequest>();
    const res = context.switchToHttp().getResponse<Response>();
    enforceOrigin(this.config, req, res);
    const named = await findGateways(this.tokens, this.gateways, String(req.params.name));
    await super.canActivate(context);
    const verified = req.oidcToken!;
    const accepted = gatewayAudiences(this.config.oidc);
    if (this.config.oidc.validateAudience && !verified.audiences.some((aud) => accepted.includes(aud))) {
      // An administrator token (ADMIN_AUDIENCE) is for /admin/v1 only.
      const message = 'The token is not meant for this service (audience)';
      throw new ApiError('invalid_token', message, {
        'WWW-Authenticate': this.challenge(req, 'invalid_token', message),
      });
    }

    // Names are per organization: the token's organization says whose gateway this is.
    const mine = named.filter((candidate) => {
      const slug = candidate.organization?.slug;
      return slug !== undefined && verified.organizations.includes(slug);
    });
    if (mine.length === 0) {
      const message = "The token's groups do not include the organization of this gateway";
      throw new ApiError('insufficient_scope', message, {
        'WWW-Authenticate': this.challenge(req, 'insufficient_scope', message),
      });
    }
    if (mine.length > 1) {
      throw new ApiError(
        'invalid_request',
        "Several of the token's organizations have a gateway of this name; use a token of one organization",
      );
    }
    const gateway = mine[0];
    req.mcpGateway = { gateway, subject: verified.subject };
    const log = currentRequestContext();
    if (log) log.organizationId = gateway.organizationId;
    return true;
  }

  override getAuthenticateOptions(): { session: false; property: keyof GatewayRequest } {
    return { session: false, property: 'oidcToken' };
  }

  /** passport's outcome in the gateway's answers: 401 challenge, or 503 while the IdP is away. */
  override handleRequest<User = VerifiedAccessToken>(
    err: unknown,
    user: User | false,
    info: unknown,
    context: ExecutionContext,
  ): User {
    if (!err && user) return user;
    const req = context.switchToHttp().getRequest<Request>();
    const authorization = req.headers.authorization;
    if (authorization === undefined || authorization.trim() === '') {
      throw new ApiError('missing_token', 'Send an OAuth access token in Authorization: Bearer', {
        'WWW-Authenticate': this.challenge(req),
      });
    }
    const failure = explainTokenFailure(err ?? info);
    if (failure instanceof TokenRejectedError) {
      throw new ApiError('invalid_token', failure.message, {
        'WWW-Authenticate': this.challenge(req, 'invalid_token', failure.message),
      });
    }
    if (failure instanceof IdentityProviderUnavailableError) {
      throw new ApiError(
        'identity_provider_unavailable',
        'The identity provider could not be reached to verify the token; retry shortly',
        { 'Retry-After': '5' },
      );
    }
    throw failure;
  }

  private challenge(req: Request, error?: string, description?: string): string {
    const { metadata } = gatewayUrls(this.config, req, String(req.params.name));
    return (
      `Bearer resource_metadata="${metadata}"` +
      (error ? `, error="${error}", error_description="${quotable(description ?? '')}"` : '')
    );
  }
}

/**
 * The gateways a path names (one per organization using the name), or 404 when no organization
 * has one (and for every name while no identity provider is configured, as no gateway can then
 * authenticate anyone).
 */
export async function findGateways(
  tokens: TokenVerifierService,
  gateways: McpGatewaysService,
  name: string,
): Promise<McpGatewayEntity[]> {
  if (!tokens.enabled) {
    throw new ApiError('not_found', 'The MCP gateway is not enabled on this server (OIDC_ISSUER is unset)');
  }
  const named = await gateways.findForRequest(name);
  if (named.length === 0) throw new ApiError('not_found', 'No MCP gateway has this name');
  return named;
}

/** A value that can sit inside a quoted-string of an auth-param. */
function quotable(text: string): string {
  return text.replace(/["\\]/g, "'").replace(/[^\x20-\x7e]/g, ' ');
}
