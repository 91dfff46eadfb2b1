import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { closeServer, readBody } from './test-identity-provider.js';

export interface PkceIdentityProvider {
  issuer: string;
  /** Registers the browser client: its redirect URI must match exactly, as at a real provider. */
  registerClient(clientId: string, redirectUri: string): void;
  /** Token requests redeemed, with whether the verifier matched the challenge. */
  readonly redemptions: { clientId: string; verified: boolean }[];
  close(): Promise<void>;
}

export interface PkceUser {
  sub: string;
  groups: string[];
  /** The `aud` of the access tokens it issues (the admin API's ADMIN_AUDIENCE). */
  audience: string;
}

interface Grant {
  clientId: string;
  redirectUri: string;
  challenge: string;
  expiresAt: number;
}

/**
 * A small OpenID provider for browser clients on 127.0.0.1: discovery, an authorization endpoint
 * that signs `user` in at once and redirects back with a one-time code, a token endpoint that
 * redeems it only with the PKCE (S256) verifier of the challenge, and the key set. RS256 access
 * tokens (RFC 9068) carry the user's groups. Discovery and the token endpoint answer any origin
 * (CORS), as providers do for single-page clients.
 */
export async function startPkceIdentityProvider(user: PkceUser): Promise<PkceIdentityProvider> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const kid = `pkce-${randomBytes(4).toString('hex')}`;
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  const clients = new Map<string, string>();
  const grants = new Map<string, Grant>();
  const redemptions: { clientId: string; verified: boolean }[] = [];
  let issuer = '';

  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, {
      'content-type': 'application/json',
      'cache-control': 'no-store',
      'access-control-allow-origin': '*',
    });
    res.end(JSON.stringify(body));
  };

  const authorize = (url: URL, res: ServerResponse) => {
    const query = url.searchParams;
    const clientId = query.get('client_id') ?? '';
    const redirectUri = query.get('redirect_uri') ?? '';
    // Never redirect to an address the client did not register.
    if (clients.get(clientId) !== redirectUri) return json(res, 400, { error: 'invalid_request' });
    const back = new URL(redirectUri);
    const state = query.get('state');
    if (state !== null) back.searchParams.set('state', state);
    if (
      query.get('response_type') !== 'code' ||
      query.get('code_challenge_method') !== 'S256' ||
      !query.get('code_challenge')
    ) {
      back.searchParams.set('error', 'invalid_request');
      back.searchParams.set('error_description', 'PKCE with S256 is required');
    } else {
      const code = randomBytes(24).toString('base64url');
      grants.set(code, {
        clientId,
        redirectUri,
        challenge: query.get('code_challenge') ?? '',
        expiresAt: Date.now() + 60_000,
      });
      back.searchParams.set('code', code);
    }
    res.writeHead(302, { location: back.href, 'cache-control': 'no-store' });
    res.end();
  };

  const token = async (req: IncomingMessage, res: ServerResponse) => {
    const form = new URLSearchParams(await readBody(req));
    const code = form.get('code') ?? '';
    const grant = grants.get(code);
    grants.delete(code);
    if (form.get('grant_type') !== 'authorization_code' || !grant || grant.expiresAt < Date.now()) {
      return json(res, 400, { error: 'invalid_grant' });
    }
    const verified =
      createHash('sha256')
        .update(form.get('code_verifier') ?? '')
        .digest('base64url') === grant.challenge;
    redemptions.push({ clientId: grant.clientId, verified });
    if (
      !verified ||
      form.get('client_id') !== grant.clientId ||
      form.get('redirect_uri') !== grant.redirectUri
    ) {
      return json(res, 400, { error: 'invalid_grant' });
    }
    const now = Math.floor(Date.now() / 1000);
    const accessToken = await new SignJWT({ scope: 'openid', groups: user.groups, client_id: grant.clientId })
      .setProtectedHeader({ alg: 'RS256', kid, typ: 'at+jwt' })
      .setIssuer(issuer)
      .setSubject(user.sub)
      .setAudience(user.audience)
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
      .setJti(randomBytes(8).toString('hex'))
      .sign(privateKey);
    json(res, 200, { access_token: accessToken, token_type: 'Bearer', expires_in: 300, scope: 'openid' });
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', issuer);
    if (req.method === 'GET' && url.pathname === '/.well-known/openid-configuration') {
      return json(res, 200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
      });
    }
    if (req.method === 'GET' && url.pathname === '/jwks') return json(res, 200, { keys: [jwk] });
    if (req.method === 'GET' && url.pathname === '/authorize') return authorize(url, res);
    if (req.method === 'POST' && url.pathname === '/token') {
      token(req, res).catch(() => json(res, 500, { error: 'server_error' }));
      return;
    }
    json(res, 404, { error: 'not_found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    registerClient: (clientId, redirectUri) => clients.set(clientId, redirectUri),
    redemptions,
    close: () => closeServer(server),
  };
}
