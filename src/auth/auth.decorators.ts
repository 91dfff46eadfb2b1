import { SetMetadata, createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { ApiKeyScope } from '../api-keys/entities/api-key.entity.js';
import type { ApiKeyPrincipal } from '../api-keys/api-keys.service.js';

export const REQUIRED_SCOPES = 'switchboard:required-scopes';
export const IS_PUBLIC = 'switchboard:public';
export const HAS_OWN_AUTH = 'switchboard:own-auth';

/**
 * The scopes that may call a route, besides `full_access` which may call every route.
 * Every route declares this, `@Public()`, or `@OwnAuthentication()`; anything else is denied.
 */
export const RequireScopes = (...scopes: Exclude<ApiKeyScope, 'full_access'>[]) =>
  SetMetadata(REQUIRED_SCOPES, scopes);

/** Open to anyone (health probes, metadata documents). */
export const Public = () => SetMetadata(IS_PUBLIC, true);

/** Authenticated by the route's own guard instead of API keys (the MCP gateway's OAuth tokens). */
export const OwnAuthentication = () => SetMetadata(HAS_OWN_AUTH, true);

export interface AuthenticatedRequest {
  principal?: ApiKeyPrincipal;
}

/** The caller's verified key: organization, key id and scopes. */
export const Principal = createParamDecorator(
  (_data: unknown, context: ExecutionContext): ApiKeyPrincipal => {
    const principal = context.switchToHttp().getRequest<AuthenticatedRequest>().principal;
    if (!principal) throw new Error('Principal used on a route without API-key authentication');
    return principal;
  },
);
