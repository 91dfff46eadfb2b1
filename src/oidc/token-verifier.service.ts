import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  createRemoteJWKSet,
  errors,
  jwtVerify,
  type JWTHeaderParameters,
  type JWTPayload,
  type JWTVerifyGetKey,
} from 'jose';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { claimAt, groupList, organizationsOfGroups } from './group-paths.js';

/** Asymmetric signatures only: `none` and the HMAC family (a shared secret) are never accepted. */
const ACCEPTED_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];

/** JOSE `typ` values an access token may carry (RFC 9068, or the generic JWT). */
const ACCESS_TOKEN_TYPES = new Set(['jwt', 'at+jwt', 'application/at+jwt']);

const FETCH_TIMEOUT_MS = 5_000;
/** After a failed discovery, requests fail fast for this long instead of each retrying. */
const DISCOVERY_RETRY_AFTER_MS = 5_000;

export interface VerifiedAccessToken {
  subject: string | undefined;
  /** Organization slugs named by the token's group paths. */
  organizations: string[];
  /** The full group paths as the token lists them (the admin API checks its admin group). */
  groups: string[];
  issuer: string;
}

/** The token is not acceptable; the message is safe to show to the client. */
export class TokenRejectedError extends Error {}

/** The identity provider's metadata or keys could not be fetched; nothing is known about the token. */
export class IdentityProviderUnavailableError extends Error {}

/**
 * Verifies OAuth access tokens issued by the configured identity provider: the signing keys come
 * from the issuer's discovery document (`jwks_uri`), cached, and fetched again when a token names
 * an unknown key id (at most once per cooldown, which jose enforces). Tokens are never logged.
 */
@Injectable()
export class TokenVerifierService {
  private readonly logger = new Logger('OidcTokens');
  private readonly oidc: AppConfig['oidc'];
  private keys: JWTVerifyGetKey | undefined;
  private discovering: Promise<JWTVerifyGetKey> | undefined;
  private discoveryFailedAt = 0;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.oidc = config.oidc;
  }

  /** False when no issuer is configured: then nothing can be verified. */
  get enabled(): boolean {
    return this.oidc.issuer !== undefined;
  }

  async verify(token: string): Promise<VerifiedAccessToken> {
    const issuer = this.oidc.issuer;
    if (issuer === undefined) throw new IdentityProviderUnavailableError('OIDC_ISSUER is not configured');
    const keys = await this.keySet(issuer);
    let payload: JWTPayload;
    let header: JWTHeaderParameters;
    try {
      ({ payload, protectedHeader: header } = await jwtVerify(token, keys, {
        issuer,
        audience: this.oidc.validateAudience ? this.acceptedAudiences() : undefined,
        algorithms: ACCEPTED_ALGORITHMS,
        clockTolerance: this.oidc.clockSkewSeconds,
        requiredClaims: ['exp'],
      }));
    } catch (error) {
      throw this.explain(error);
    }
    assertAccessToken(header, payload);
    const groups = groupList(claimAt(payload, this.oidc.groupsClaim));
    if (!groups || groups.length === 0) {
      throw new TokenRejectedError(`The token carries no "${this.oidc.groupsClaim}" claim with groups`);
    }
    const organizations = organizationsOfGroups(groups);
    if (organizations.length === 0) {
      throw new TokenRejectedError(
        `The token's "${this.oidc.groupsClaim}" claim holds no full group paths such as /organization/team`,
      );
    }
    const subject = typeof payload.sub === 'string' ? payload.sub : undefined;
    return { subject, organizations, groups, issuer };
  }

  private acceptedAudiences(): string[] {
    return [...(this.oidc.clientId ? [this.oidc.clientId] : []), ...this.oidc.extraAudiences];
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
    return createRemoteJWKSet(new URL(document.jwks_uri), {
      cacheMaxAge: this.oidc.jwksCacheMs,
      timeoutDuration: FETCH_TIMEOUT_MS,
    });
  }

  /** Maps a jose failure to what the client is told, or to "provider unavailable". */
  private explain(error: unknown): Error {
    if (error instanceof errors.JWTExpired) return new TokenRejectedError('The token has expired');
    if (error instanceof errors.JWTClaimValidationFailed) {
      switch (error.claim) {
        case 'nbf':
          return new TokenRejectedError('The token is not valid yet');
        case 'iss':
          return new TokenRejectedError('The token was not issued by the accepted identity provider');
        case 'aud':
          return new TokenRejectedError('The token is not meant for this service (audience)');
        case 'exp':
          return new TokenRejectedError('The token has no expiry');
        default:
          return new TokenRejectedError(`The token's "${error.claim}" claim is not acceptable`);
      }
    }
    if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported) {
      return new TokenRejectedError('The token is not signed with an accepted algorithm');
    }
    if (
      error instanceof errors.JWSSignatureVerificationFailed ||
      error instanceof errors.JWKSNoMatchingKey ||
      error instanceof errors.JWKSMultipleMatchingKeys
    ) {
      return new TokenRejectedError("The token's signature could not be verified");
    }
    if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) {
      return new TokenRejectedError('The token is not a well-formed signed JWT');
    }
    // Anything else is about fetching or reading the key set, not about the token.
    this.logger.warn({ msg: 'OIDC key set unavailable', detail: describe(error) });
    return new IdentityProviderUnavailableError('identity provider keys unavailable');
  }
}

/** Refuses ID tokens and other JWTs of the provider that are not access tokens. */
function assertAccessToken(header: JWTHeaderParameters, payload: JWTPayload): void {
  if (header.typ !== undefined && !ACCESS_TOKEN_TYPES.has(header.typ.toLowerCase())) {
    throw new TokenRejectedError('The token is not an access token');
  }
  // Keycloak marks its tokens in a `typ` claim: Bearer for access tokens, ID, Refresh, Logout …
  const kind = payload.typ;
  if (typeof kind === 'string' && kind.toLowerCase() !== 'bearer') {
    throw new TokenRejectedError('The token is not an access token');
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
