import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import passport from 'passport';
import { ApiKeyAuthenticator, type ApiKeyPrincipal } from '../api-keys/api-key-authenticator.js';
import { ApiError } from '../common/errors/error-catalogue.js';
import { inSpan } from '../common/tracing/tracing.js';

export const API_KEY_STRATEGY = 'api-key';

/** Reads the key from `x-api-key` or `Authorization: Bearer`; the two are equivalent. */
export function presentedApiKey(req: Request): string | undefined {
  const header = req.headers['x-api-key'];
  if (typeof header === 'string' && header.length > 0) return header.trim();
  const authorization = req.headers.authorization;
  if (authorization) {
    const match = /^Bearer\s+(.+)$/i.exec(authorization);
    return match ? match[1].trim() : authorization.trim();
  }
  return undefined;
}

type Verify = (key: string, done: (error: unknown, principal?: ApiKeyPrincipal | false) => void) => void;

/**
 * passport keeps one registry per process, so when several apps share a process (tests run two
 * replicas in one) the last registered strategy would look keys up in another app's database.
 * The guard hands each request its own app's strategy under this key; passport's lookup by name
 * stays what routes the request here.
 */
export const OWN_API_KEY_STRATEGY = Symbol('ownApiKeyStrategy');
type WithOwnStrategy = Request & { [OWN_API_KEY_STRATEGY]?: HeaderApiKeyStrategy };

/**
 * passport's base strategy for a key in a header: no key fails with `missing_api_key`, and the
 * verify callback decides about a presented one.
 */
class HeaderApiKeyStrategy extends passport.Strategy {
  constructor(readonly verifyKey: Verify) {
    super();
  }

  override authenticate(req: Request): void {
    const key = presentedApiKey(req);
    if (!key) {
      this.fail(new ApiError('missing_api_key', 'Send an API key in x-api-key or Authorization: Bearer'));
      return;
    }
    const verifyKey = (req as WithOwnStrategy)[OWN_API_KEY_STRATEGY]?.verifyKey ?? this.verifyKey;
    verifyKey(key, (error, principal) => {
      if (error) this.error(error);
      else if (principal) this.success(principal);
      else this.fail(new ApiError('invalid_api_key', 'The API key is malformed, unknown or revoked'));
    });
  }
}

/** The `api-key` passport strategy: an organization's API key, looked up (cached) by its hash. */
const AUTHENTICATE_SPAN = { 'switchboard.auth.method': 'api_key' };

@Injectable()
export class ApiKeyStrategy extends PassportStrategy(HeaderApiKeyStrategy, API_KEY_STRATEGY) {
  constructor(private readonly apiKeys: ApiKeyAuthenticator) {
    super();
  }

  async validate(key: string): Promise<ApiKeyPrincipal | false> {
    return inSpan(
      'authenticate',
      AUTHENTICATE_SPAN,
      async () => (await this.apiKeys.authenticate(key)) ?? false,
    );
  }
}
