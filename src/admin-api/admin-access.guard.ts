import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { isWellFormedApiKey } from '../api-keys/api-key-format.js';
import { ApiKeyAuthenticator } from '../api-keys/api-key-authenticator.js';
import { presentedApiKey } from '../auth/api-key.strategy.js';
import { ApiError } from '../common/errors/error-catalogue.js';
import { currentRequestContext } from '../common/logging/request-context.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { RateLimitService } from '../limits/rate-limit.service.js';
import {
  gatewayAudiences,
  IdentityProviderUnavailableError,
  TokenRejectedError,
  TokenVerifierService,
} from '../oidc/token-verifier.service.js';
import type { AdminCaller, AdminRequest } from './admin-caller.js';

/**
 * The admin API's authentication (routes marked `@AdminAccess()`): a credential shaped like an
 * API key must be an active key with the `admin` scope (its organization only; `full_access`
 * does not include it); anything else must be an access token of the identity provider, verified
 * as the MCP gateway verifies its tokens but for the audience ADMIN_AUDIENCE (and none of the
 * gateway's), whose groups include ADMIN_GROUP (every organization).
 */
@Injectable()
export class AdminAccessGuard implements CanActivate {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly apiKeys: ApiKeyAuthenticator,
    private readonly tokens: TokenVerifierService,
    private readonly rateLimits: RateLimitService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<Request & AdminRequest>();
    const presented = presentedApiKey(req);
    if (!presented) {
      throw new ApiError(
        'missing_api_key',
        'Send an API key with scope "admin", or an administrator access token, in Authorization: Bearer',
      );
    }
    const caller = isWellFormedApiKey(presented)
      ? await this.keyCaller(presented)
      : await this.tokenCaller(presented);
    req.adminCaller = caller;
    const log = currentRequestContext();
    if (log && caller.kind === 'organization') log.organizationId = caller.organizationId;
    // Per caller: an organization's key counts against its organization's limit (as its API
    // requests do), a platform administrator against ADMIN_RATE_LIMIT_PER_MINUTE of its own.
    const headers =
      caller.kind === 'organization'
        ? await this.rateLimits.enforce(caller.organizationId)
        : await this.rateLimits.enforceAdmin(caller.issuer, caller.subject);
    const res = context.switchToHttp().getResponse<Response>();
    for (const name in headers) res.setHeader(name, headers[name]);
    return true;
  }

  private async keyCaller(presented: string): Promise<AdminCaller> {
    const principal = await this.apiKeys.authenticate(presented);
    if (!principal) throw new ApiError('invalid_api_key', 'The API key is malformed, unknown or revoked');
    if (!principal.scopes.includes('admin')) {
      throw new ApiError('insufficient_scope', 'This API key needs scope "admin"');
    }
    return { kind: 'organization', organizationId: principal.organizationId, keyId: principal.keyId };
  }

  private async tokenCaller(token: string): Promise<AdminCaller> {
    const { adminGroup, adminAudience } = this.config.oidc;
    if (!this.tokens.enabled || adminGroup === undefined || adminAudience === undefined) {
      throw new ApiError(
        'invalid_api_key',
        'The credential is not an API key, and administrator tokens are off (OIDC_ISSUER or ADMIN_GROUP unset)',
      );
    }
    let verified;
    try {
      verified = await this.tokens.verify(token);
    } catch (error) {
      if (error instanceof TokenRejectedError) throw new ApiError('invalid_token', error.message);
      if (error instanceof IdentityProviderUnavailableError) {
        throw new ApiError(
          'identity_provider_unavailable',
          'The identity provider could not be reached to verify the token; retry shortly',
        );
      }
      throw error;
    }
    // Only a token issued for the admin API: one the MCP gateway would take (issued to any
    // loopback MCP client) is never a platform credential, whatever else its `aud` lists.
    const gateway = gatewayAudiences(this.config.oidc);
    if (
      !verified.audiences.includes(adminAudience) ||
      verified.audiences.some((audience) => gateway.includes(audience))
    ) {
      throw new ApiError(
        'invalid_token',
        "The token is not an administrator token: its audience must be the admin API's (ADMIN_AUDIENCE) alone",
      );
    }
    if (!verified.groups.includes(adminGroup)) {
      throw new ApiError('insufficient_scope', "The token's groups do not include the administrators' group");
    }
    if (verified.subject === undefined) throw new ApiError('invalid_token', 'The token has no subject');
    return { kind: 'platform', subject: verified.subject, issuer: verified.issuer };
  }
}
