import { KeyObject, type webcrypto } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type { JWTVerifyGetKey } from 'jose';
import type { AppConfig } from '../config/app-config.js';

/**
 * Asymmetric signatures only: `none` and the HMAC family (a shared secret) are never accepted.
 * EdDSA is not listed: jsonwebtoken, which passport-jwt verifies with, does not implement it.
 */
export const ACCEPTED_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
] as const;

const FETCH_TIMEOUT_MS = 5_000;
/** After a failed discovery, requests fail fast for this long instead of each retrying. */
const DISCOVERY_RETRY_AFTER_MS = 5_000;

/** The token is not acceptable; the message is safe to show to the client. */
export class TokenRejectedError extends Error {}

/** The identity provider's metadata or keys could not be fetched; nothing is known about the token. */
export class IdentityProviderUnavailableError extends Error {}

/**
 * The signing keys of the configured issuer, the key source of the `oidc-jwt` strategy: found
 * through the discovery document (`jwks_uri`), cached by jose's remote key set, and fetched
 * again when a token names an unknown key id (at most once per cooldown, which jose enforces).
 */
export class OidcKeySet {
  private readonly logger = new Logger('OidcTokens');
  private keys: JWTVerifyGetKey | undefined;
  private discovering: Promise<JWTVerifyGetKey> | undefined;
  private discoveryFailedAt = 0;

  constructor(private readonly oidc: AppConfig['oidc']) {}

  /** The public key that should have signed this token; the header is read, not trusted. */
  async keyFor(token: string): Promise<KeyObject> {
    const issuer = this.oidc.issuer;
    if (issuer === undefined) throw new IdentityProviderUnavailableError('OIDC_ISSUER is not configured');
    // jose is loaded by the first token, not with the service: most deployments verify none.
    const jose = await import('jose');
    let header;
    try {
      header = jose.decodeProtectedHeader(token);
    } catch {
      throw new TokenRejectedError('The token is not a well-formed signed JWT');
    }
    const alg = header.alg;
    if (typeof alg !== 'string' || !(ACCEPTED_ALGORITHMS as readonly string[]).includes(alg)) {
      throw new TokenRejectedError('The token is not signed with an accepted algorithm');
    }
    const keys = await this.keySet(issuer);
    try {
      // jose hands out WebCrypto keys; jsonwebtoken takes Node's KeyObject.
      return KeyObject.from((await keys({ ...header, alg }, undefined as never)) as webcrypto.CryptoKey);
    } catch (error) {
      throw this.explain(error, jose.errors);
    }
  }

  /** The issuer's key set, discovered once; concurrent first requests share one discovery. */
  private async keySet(issuer: string): Promise<JWTVerifyGetKey> {
    if (this.keys) return this.keys;
    if (Date.now() - this.discoveryFailedAt < DISCOVERY_RETRY_AFTER_MS) {
      throw new IdentityProviderUnavailableError('identity provider discovery failed recently');
    }
    this.discovering ??= this.discover(issuer)
      .then(
        (keys) => (this.keys = keys),
        (error: unknown) => {
          this.discoveryFailedAt = Date.now();
          throw error;
        },
      )
      .finally(() => {
        this.discovering = undefined;
      });
    return this.discovering;
  }

  private async discover(issuer: string): Promise<JWTVerifyGetKey> {
    const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    let document: { issuer?: unknown; jwks_uri?: unknown };
    try {
      const res = await fetch(url, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      });
      if (!res.ok) throw new Error(`HTTP ${res.status}`);
      document = (await res.json()) as typeof document;
    } catch (error) {
      this.logger.warn({ msg: 'OIDC discovery failed', url, detail: describe(error) });
      throw new IdentityProviderUnavailableError('identity provider discovery failed');
    }
    // A mismatch usually means the provider is reached under another host name than it believes.
    if (document.issuer !== issuer) {
      this.logger.error({
        msg: 'OIDC discovery names another issuer than OIDC_ISSUER',
        configured: issuer,
        discovered: typeof document.issuer === 'string' ? document.issuer : null,
      });
      throw new IdentityProviderUnavailableError('identity provider issuer mismatch');
    }
    if (typeof document.jwks_uri !== 'string') {
      this.logger.error({ msg: 'OIDC discovery document has no jwks_uri', url });
      throw new IdentityProviderUnavailableError('identity provider publishes no keys');
    }
    return (await import('jose')).createRemoteJWKSet(new URL(document.jwks_uri), {
      cacheMaxAge: this.oidc.jwksCacheMs,
      timeoutDuration: FETCH_TIMEOUT_MS,
    });
  }

  /** A key-selection failure: about the token (no such key), or about reaching the key set. */
  private explain(error: unknown, errors: typeof import('jose').errors): Error {
    if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) {
      return new TokenRejectedError("The token's signature could not be verified");
    }
    if (error instanceof errors.JOSENotSupported || error instanceof errors.JOSEAlgNotAllowed) {
      return new TokenRejectedError('The token is not signed with an accepted algorithm');
    }
    this.logger.warn({ msg: 'OIDC key set unavailable', detail: describe(error) });
    return new IdentityProviderUnavailableError('identity provider keys unavailable');
  }
}

/** Name and message only (errors of fetch may come from another realm, so no instanceof). */
function describe(error: unknown): string {
  if (typeof error !== 'object' || error === null) return 'unknown failure';
  const { name, message, cause } = error as { name?: unknown; message?: unknown; cause?: unknown };
  const detail = `${String(name)}: ${String(message)}`.slice(0, 200);
  const causeMessage = (cause as { message?: unknown } | undefined)?.message;
  return typeof causeMessage === 'string' ? `${detail} (${causeMessage.slice(0, 100)})` : detail;
}
