import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import { Strategy, type SecretOrKeyProvider } from 'passport-jwt';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { claimAt, groupList, organizationsOfGroups } from './group-paths.js';
import {
  ACCEPTED_ALGORITHMS,
  IdentityProviderUnavailableError,
  OidcKeySet,
  TokenRejectedError,
} from './oidc-key-set.js';

export { IdentityProviderUnavailableError, TokenRejectedError } from './oidc-key-set.js';

/** The passport strategy name the MCP gateway guard authenticates with. */
export const OIDC_JWT_STRATEGY = 'oidc-jwt';

/** JOSE `typ` values an access token may carry (RFC 9068, or the generic JWT). */
const ACCESS_TOKEN_TYPES = new Set(['jwt', 'at+jwt', 'application/at+jwt']);

/** RFC 6750 b64token after the scheme; anything else carries no token. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

export interface VerifiedAccessToken {
  subject: string | undefined;
  /** Organization slugs named by the token's group paths. */
  organizations: string[];
  /** The full group paths as the token lists them (the admin API checks its admin group). */
  groups: string[];
  issuer: string;
  /** The token's `aud`, as a list. */
  audiences: string[];
}

type Claims = Record<string, unknown>;

/** What jsonwebtoken hands the strategy with `complete: true`. */
interface DecodedToken {
  header: { typ?: unknown };
  payload: Claims | string;
}

/**
 * The `oidc-jwt` passport strategy: OAuth access tokens of the configured identity provider.
 * passport-jwt checks the signature, issuer, audience, expiry and not-before (with the clock
 * skew) against keys from the issuer's JWKS (OidcKeySet); `validate` then refuses what is not
 * an access token and names the organizations of the token's group paths. Tokens are never
 * logged.
 */
@Injectable()
export class TokenVerifierService extends PassportStrategy(Strategy, OIDC_JWT_STRATEGY) {
  private readonly keys: OidcKeySet;
  private readonly oidc: AppConfig['oidc'];

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    const keys = new OidcKeySet(config.oidc);
    const secretOrKeyProvider: SecretOrKeyProvider<Request> = (_req, token, done) => {
      keys.keyFor(String(token)).then(
        (key) => done(null, key as unknown as Buffer),
        (error: unknown) => done(error),
      );
    };
    // The admin API's audience passes the signature check here; each surface then insists on its
    // own (McpGatewayGuard on the gateway's, AdminAccessGuard on ADMIN_AUDIENCE).
    const audiences = [
      ...gatewayAudiences(config.oidc),
      ...(config.oidc.adminAudience ? [config.oidc.adminAudience] : []),
    ];
    super({
      jwtFromRequest: (req: Request) => BEARER.exec(req.headers.authorization ?? '')?.[1] ?? null,
      secretOrKeyProvider,
      issuer: config.oidc.issuer,
      audience: config.oidc.validateAudience ? audiences : undefined,
      algorithms: [...ACCEPTED_ALGORITHMS],
      jsonWebTokenOptions: { clockTolerance: config.oidc.clockSkewSeconds, complete: true },
    });
    this.keys = keys;
    this.oidc = config.oidc;
  }

  /** False when no issuer is configured: then nothing can be verified. */
  get enabled(): boolean {
    return this.oidc.issuer !== undefined;
  }

  /** passport-jwt's verify callback, after the signature and registered claims passed. */
  validate(decoded: DecodedToken): VerifiedAccessToken {
    const { header, payload } = decoded;
    if (typeof payload !== 'object' || payload === null) {
      throw new TokenRejectedError('The token is not a well-formed signed JWT');
    }
    if (typeof payload.exp !== 'number') throw new TokenRejectedError('The token has no expiry');
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
    // passport-jwt checked `iss` against OIDC_ISSUER already.
    const aud = payload.aud;
    const audiences = typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud.map(String) : [];
    return { subject, organizations, groups, issuer: String(payload.iss), audiences };
  }

  /**
   * The same check for a bare token, outside a request: runs this strategy once the way
   * passport does (success / fail / error hooks on a copy of it).
   */
  verify(token: string): Promise<VerifiedAccessToken> {
    return new Promise((resolve, reject) => {
      const attempt = Object.create(this) as this & {
        success(user: unknown): void;
        fail(info: unknown): void;
        error(error: unknown): void;
      };
      attempt.success = (user) => resolve(user as VerifiedAccessToken);
      attempt.fail = (info) => reject(explainTokenFailure(info));
      attempt.error = (error) => reject(explainTokenFailure(error));
      attempt.authenticate({ headers: { authorization: `Bearer ${token}` } } as Request);
    });
  }
}

/** The audiences a token for the MCP gateway may carry (never ADMIN_AUDIENCE). */
export function gatewayAudiences(oidc: AppConfig['oidc']): string[] {
  return [...(oidc.clientId ? [oidc.clientId] : []), ...oidc.extraAudiences];
}

/**
 * What the strategy's failure means: our own errors pass through; jsonwebtoken's (known only
 * by name and message) become a message the client may see.
 */
export function explainTokenFailure(failure: unknown): Error {
  if (failure instanceof TokenRejectedError || failure instanceof IdentityProviderUnavailableError) {
    return failure;
  }
  const { name, message } = (failure ?? {}) as { name?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : '';
  if (name === 'TokenExpiredError') return new TokenRejectedError('The token has expired');
  if (name === 'NotBeforeError') return new TokenRejectedError('The token is not valid yet');
  if (name === 'JsonWebTokenError') {
    if (text.startsWith('jwt audience invalid')) {
      return new TokenRejectedError('The token is not meant for this service (audience)');
    }
    if (text.startsWith('jwt issuer invalid')) {
      return new TokenRejectedError('The token was not issued by the accepted identity provider');
    }
    if (text === 'invalid signature') {
      return new TokenRejectedError("The token's signature could not be verified");
    }
    if (text === 'invalid algorithm' || text.includes('"alg"') || text.includes('when using')) {
      return new TokenRejectedError('The token is not signed with an accepted algorithm');
    }
    if (text === 'invalid exp value' || text === 'invalid nbf value') {
      return new TokenRejectedError(`The token's "${text.split(' ')[1]}" claim is not acceptable`);
    }
    return new TokenRejectedError('The token is not a well-formed signed JWT');
  }
  if (failure instanceof Error && failure.message === 'No auth token') {
    return new TokenRejectedError('The Authorization header must be "Bearer <access token>"');
  }
  return failure instanceof Error ? failure : new TokenRejectedError('The token could not be verified');
}

/** Refuses ID tokens and other JWTs of the provider that are not access tokens. */
function assertAccessToken(header: DecodedToken['header'], payload: Claims): void {
  if (typeof header.typ === 'string' && !ACCESS_TOKEN_TYPES.has(header.typ.toLowerCase())) {
    throw new TokenRejectedError('The token is not an access token');
  }
  // Keycloak marks its tokens in a `typ` claim: Bearer for access tokens, ID, Refresh, Logout …
  const kind: unknown = payload.typ;
  if (typeof kind === 'string' && kind.toLowerCase() !== 'bearer') {
    throw new TokenRejectedError('The token is not an access token');
  }
}
