import { createHash, randomBytes } from 'node:crypto';
import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import type Provider from 'oidc-provider';
import type { AdapterFactory } from 'oidc-provider';

/** The accounts of the provider: account id → full group paths put in the `groups` claim. */
export type TestUsers = Record<string, string[]>;

export interface TestIdentityProvider {
  issuer: string;
  /** The public client MCP clients use (no secret, PKCE S256, loopback redirects). */
  clientId: string;
  /** The backend's client id, put in `aud` of tokens for a gateway resource. */
  audience: string;
  /** The resource-server scope tokens for a gateway carry. */
  scope: string;
  /** Id of the key the provider signs with, for minting tokens it would accept. */
  kid: string;
  /** Signs a token with the provider's key (or another); defaults make a valid gateway token. */
  mint(claims?: JWTPayload, options?: MintOptions): Promise<string>;
  /**
   * Plays the browser for an authorization URL: follows redirects with cookies, signs in as
   * `user`, consents, and returns the redirect to the client (carrying `code` or `error`).
   */
  signIn(authorizationUrl: string, user: string): Promise<URL>;
  /** The whole Authorization Code + PKCE flow over HTTP, as an IDE would run it. */
  authorizationCodeFlow(options: { user: string; resource: string }): Promise<TokenResponse>;
  close(): Promise<void>;
}

export interface MintOptions {
  key?: CryptoKey;
  kid?: string;
  alg?: string;
  typ?: string;
}

export interface TokenResponse {
  access_token: string;
  token_type: string;
  expires_in: number;
  scope?: string;
}

const CLIENT_ID = 'switchboard-mcp-ide';
const AUDIENCE = 'switchboard-backend';
const SCOPE = 'mcp:tools';
export const LOOPBACK_REDIRECT = 'http://127.0.0.1:53682/callback';

/**
 * A real OpenID provider (`oidc-provider`) on 127.0.0.1 for tests. Interactions are a fixed
 * login form and consent screen answered in JSON, so a test signs in with plain HTTP requests.
 * Access tokens for a resource under `/mcp-gateway/` are RS256 JWTs with `aud` = the backend's
 * client id and the account's `groups`.
 */
export async function startTestIdentityProvider(users: TestUsers): Promise<TestIdentityProvider> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = `test-${randomBytes(4).toString('hex')}`;
  const privateJwk: JWK = { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };

  let handler: RequestListener = (_req, res) => res.writeHead(503).end();
  const server = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const { Provider, errors, createMemoryAdapter } = await loadOidcProvider();
  const provider = new Provider(issuer, {
    // The package's own in-memory store, named explicitly so that it does not warn about it.
    adapter: createMemoryAdapter(),
    clients: [
      {
        client_id: CLIENT_ID,
        application_type: 'native',
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code'],
        response_types: ['code'],
        // Native loopback redirects match on any port.
        redirect_uris: ['http://127.0.0.1/callback', 'http://localhost/callback'],
      },
    ],
    jwks: { keys: [privateJwk] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    scopes: ['openid', SCOPE],
    pkce: { required: () => true },
    ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 600, Interaction: 600, Session: 600 },
    findAccount: (_ctx, id) => (users[id] ? { accountId: id, claims: () => ({ sub: id }) } : undefined),
    extraTokenClaims: (_ctx, token) => {
      const accountId = (token as { accountId?: string }).accountId;
      return accountId && users[accountId] ? { groups: users[accountId] } : undefined;
    },
    features: {
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => {
          if (!new URL(resource).pathname.startsWith('/mcp-gateway/')) throw new errors.InvalidTarget();
          return {
            scope: SCOPE,
            audience: AUDIENCE,
            accessTokenFormat: 'jwt',
            accessTokenTTL: 600,
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
  });
  const providerCallback = provider.callback();

  handler = (req, res) => {
    const match = /^\/interaction\/([^/?]+)(?:\/(login|confirm))?/.exec(req.url ?? '');
    if (!match) {
      void providerCallback(req, res);
      return;
    }
    interaction(provider, users, req, res, match[2]).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(error));
    });
  };

  const mint = async (claims: JWTPayload = {}, options: MintOptions = {}): Promise<string> => {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({
      iss: issuer,
      aud: AUDIENCE,
      sub: 'alice',
      iat: now,
      exp: now + 300,
      scope: SCOPE,
      groups: users.alice ?? [],
      ...claims,
    })
      .setProtectedHeader({
        alg: options.alg ?? 'RS256',
        kid: options.kid ?? kid,
        typ: options.typ ?? 'at+jwt',
      })
      .sign(options.key ?? privateKey);
  };

  const signIn = async (authorizationUrl: string, user: string): Promise<URL> => {
    const cookies = new Map<string, string>();
    let url = authorizationUrl;
    let form: Record<string, string> | undefined;
    for (let step = 0; step < 20; step += 1) {
      const res = await fetch(url, {
        method: form ? 'POST' : 'GET',
        redirect: 'manual',
        headers: {
          cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
          ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
        body: form ? new URLSearchParams(form).toString() : undefined,
      });
      for (const cookie of res.headers.getSetCookie()) {
        const [pair, ...attributes] = cookie.split(';');
        const [name, ...value] = pair.split('=');
        const expired = attributes.some((a) => /expires=thu, 01 jan 1970/i.test(a.trim()));
        if (expired) cookies.delete(name.trim());
        else cookies.set(name.trim(), value.join('=').trim());
      }
      form = undefined;
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        const next = new URL(location, url);
        if (next.origin !== issuer) return next;
        url = next.href;
        continue;
      }
      if (res.status === 200 && new URL(url).pathname.startsWith('/interaction/')) {
        const { uid, prompt } = (await res.json()) as { uid: string; prompt: string };
        form = prompt === 'login' ? { login: user } : {};
        url = `${issuer}/interaction/${uid}/${prompt === 'login' ? 'login' : 'confirm'}`;
        continue;
      }
      throw new Error(`sign-in stopped at ${url}: ${res.status} ${await res.text()}`);
    }
    throw new Error('sign-in did not finish');
  };

  return {
    issuer,
    clientId: CLIENT_ID,
    audience: AUDIENCE,
    scope: SCOPE,
    kid,
    mint,
    signIn,
    async authorizationCodeFlow({ user, resource }) {
      const verifier = randomBytes(32).toString('base64url');
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      const state = randomBytes(8).toString('hex');
      const authorize = new URL(`${issuer}/auth`);
      authorize.search = new URLSearchParams({
        client_id: CLIENT_ID,
        response_type: 'code',
        redirect_uri: LOOPBACK_REDIRECT,
        scope: SCOPE,
        resource,
        state,
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }).toString();
      const callback = await signIn(authorize.href, user);
      if (callback.searchParams.get('state') !== state) throw new Error('state mismatch');
      const code = callback.searchParams.get('code');
      if (!code) throw new Error(`authorization failed: ${callback.search}`);
      const res = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          client_id: CLIENT_ID,
          code,
          redirect_uri: LOOPBACK_REDIRECT,
          code_verifier: verifier,
          resource,
        }).toString(),
      });
      const body = (await res.json()) as TokenResponse & { error?: string };
      if (!res.ok) throw new Error(`token request failed: ${res.status} ${JSON.stringify(body)}`);
      return body;
    },
    close: () => closeServer(server),
  };
}

/**
 * oidc-provider warns on import that Node 20 is an "unsupported runtime" (it targets Node 22
 * LTS and later); it runs this test-only provider fine on Node 20, so that one line is dropped.
 */
async function loadOidcProvider() {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (!String(args[0]).startsWith('oidc-provider WARNING: Unsupported runtime')) warn(...args);
  };
  try {
    const { default: Provider, errors } = await import('oidc-provider');
    const memoryAdapter = (await import(
      // @ts-expect-error: a module of the package without type declarations
      'oidc-provider/lib/adapters/memory_adapter.js'
    )) as { createMemoryAdapter: () => AdapterFactory };
    return { Provider, errors, createMemoryAdapter: memoryAdapter.createMemoryAdapter };
  } finally {
    console.warn = warn;
  }
}

/** The fixed interaction screens: GET describes the prompt; POST login signs in; POST confirm consents. */
async function interaction(
  provider: Provider,
  users: TestUsers,
  req: IncomingMessage,
  res: ServerResponse,
  action: string | undefined,
): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  if (action === undefined) {
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify({ uid: details.uid, prompt: details.prompt.name }));
    return;
  }
  if (action === 'login') {
    const login = new URLSearchParams(await readBody(req)).get('login') ?? '';
    if (!users[login]) {
      await provider.interactionFinished(req, res, {
        error: 'access_denied',
        error_description: 'unknown user',
      });
      return;
    }
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId: login } },
      { mergeWithLastSubmission: false },
    );
    return;
  }
  const { prompt, params, session } = details;
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId: session?.accountId, clientId: String(params.client_id) });
  if (!grant) throw new Error('grant not found');
  const missing = prompt.details as {
    missingOIDCScope?: string[];
    missingOIDCClaims?: string[];
    missingResourceScopes?: Record<string, string[]>;
  };
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
    grant.addResourceScope(resource, scopes.join(' '));
  }
  const grantId = await grant.save();
  await provider.interactionFinished(
    req,
    res,
    { consent: details.grantId ? {} : { grantId } },
    { mergeWithLastSubmission: true },
  );
}

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

/** The backend settings of spec 5.4 item 7 for this provider, audience checked as in production. */
export function gatewayOidcEnv(idp: TestIdentityProvider): Record<string, string> {
  return {
    OIDC_ISSUER: idp.issuer,
    OIDC_CLIENT_ID: idp.audience,
    OIDC_EXTRA_AUDIENCES: idp.clientId,
    OIDC_VALIDATE_AUDIENCE: 'true',
    OIDC_GROUPS_CLAIM: 'groups',
    MCP_SCOPES_SUPPORTED: idp.scope,
  };
}

export function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
