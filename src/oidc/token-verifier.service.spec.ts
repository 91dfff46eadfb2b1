import { createServer, type Server } from 'node:http';
import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { loadConfig } from '../config/app-config.js';
import { IdentityProviderUnavailableError, TokenVerifierService } from './token-verifier.service.js';

interface Signer {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

async function signer(kid: string): Promise<Signer> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  return { kid, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}

/**
 * A minimal identity provider: a discovery document and a JWKS whose keys the test swaps, and
 * counters of how often each was fetched.
 */
describe('TokenVerifierService', () => {
  let server: Server;
  let issuer: string;
  let published: JWK[] = [];
  let discoveredIssuer: string | undefined;
  let fetches = { discovery: 0, jwks: 0 };
  let first: Signer;

  beforeAll(async () => {
    Logger.overrideLogger(false); // the failure cases log warnings by design
    server = createServer((req, res) => {
      if (req.url === '/realms/acme/.well-known/openid-configuration') {
        fetches.discovery += 1;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ issuer: discoveredIssuer ?? issuer, jwks_uri: `${issuer}/certs` }));
      } else if (req.url === '/realms/acme/certs') {
        fetches.jwks += 1;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ keys: published }));
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}/realms/acme`;
    first = await signer('first');
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  beforeEach(() => {
    published = [first.publicJwk];
    discoveredIssuer = undefined;
    fetches = { discovery: 0, jwks: 0 };
  });

  const verifier = (env: Record<string, string> = {}) =>
    new TokenVerifierService(
      loadConfig({ OIDC_ISSUER: issuer, OIDC_CLIENT_ID: 'backend', OIDC_EXTRA_AUDIENCES: 'ide', ...env }),
    );

  const token = (with_: Signer, claims: JWTPayload = {}) =>
    new SignJWT({
      iss: issuer,
      aud: 'backend',
      sub: 'u1',
      exp: Math.floor(Date.now() / 1000) + 300,
      groups: ['/acme/engineering'],
      ...claims,
    })
      .setProtectedHeader({ alg: 'ES256', kid: with_.kid })
      .sign(with_.privateKey);

  it('accepts a valid token and names the organizations of its group paths', async () => {
    const result = await verifier().verify(
      await token(first, { groups: ['/acme/engineering', '/globex/sales', 'plain'] }),
    );
    expect(result).toEqual({
      subject: 'u1',
      organizations: ['acme', 'globex'],
      groups: ['/acme/engineering', '/globex/sales', 'plain'],
      issuer,
      audiences: ['backend'],
    });
  });

  it('discovers once and reuses the keys for later tokens', async () => {
    const service = verifier();
    await service.verify(await token(first));
    await service.verify(await token(first));
    expect(fetches).toEqual({ discovery: 1, jwks: 1 });
  });

  it('fetches the key set again for an unknown key id once the cooldown has passed (rotation)', async () => {
    const service = verifier();
    await service.verify(await token(first));
    const rotated = await signer('rotated');
    published = [rotated.publicJwk];
    // Within jose's 30 s cooldown an unknown key id is refused without hammering the provider.
    await expect(service.verify(await token(rotated))).rejects.toThrow('signature could not be verified');
    expect(fetches.jwks).toBe(1);
    const now = jest.spyOn(Date, 'now').mockReturnValue(Date.now() + 31_000);
    try {
      await expect(service.verify(await token(rotated))).resolves.toMatchObject({ organizations: ['acme'] });
    } finally {
      now.mockRestore();
    }
    expect(fetches).toEqual({ discovery: 1, jwks: 2 });
  });

  it('accepts an extra audience and refuses any other', async () => {
    const service = verifier();
    await expect(service.verify(await token(first, { aud: 'ide' }))).resolves.toBeDefined();
    await expect(service.verify(await token(first, { aud: 'account' }))).rejects.toThrow(
      'The token is not meant for this service (audience)',
    );
  });

  it('skips the audience check when OIDC_VALIDATE_AUDIENCE=false', async () => {
    const service = verifier({ OIDC_VALIDATE_AUDIENCE: 'false', OIDC_CLIENT_ID: '' });
    await expect(service.verify(await token(first, { aud: 'account' }))).resolves.toBeDefined();
  });

  it('reads the groups from a nested claim named with dots', async () => {
    const service = verifier({ OIDC_GROUPS_CLAIM: 'ext.groups' });
    const nested = await token(first, { groups: undefined, ext: { groups: ['/acme'] } });
    await expect(service.verify(nested)).resolves.toMatchObject({ organizations: ['acme'] });
  });

  it('tolerates the configured clock skew on exp, and no more', async () => {
    const now = Math.floor(Date.now() / 1000);
    const service = verifier({ OIDC_CLOCK_SKEW_SECONDS: '60' });
    await expect(service.verify(await token(first, { exp: now - 30 }))).resolves.toBeDefined();
    await expect(service.verify(await token(first, { exp: now - 120 }))).rejects.toThrow(
      'The token has expired',
    );
  });

  it('refuses ID tokens and refresh tokens of the provider', async () => {
    const service = verifier();
    await expect(service.verify(await token(first, { typ: 'ID' }))).rejects.toThrow('not an access token');
    await expect(service.verify(await token(first, { typ: 'Bearer' }))).resolves.toBeDefined();
  });

  it('reports the provider unavailable when discovery names another issuer', async () => {
    discoveredIssuer = 'https://elsewhere.example/realms/acme';
    await expect(verifier().verify(await token(first))).rejects.toBeInstanceOf(
      IdentityProviderUnavailableError,
    );
  });

  it('reports the provider unavailable when it cannot be reached, and retries later', async () => {
    const service = new TokenVerifierService(
      loadConfig({ OIDC_ISSUER: 'http://127.0.0.1:1/realms/none', OIDC_CLIENT_ID: 'backend' }),
    );
    await expect(service.verify(await token(first))).rejects.toBeInstanceOf(IdentityProviderUnavailableError);
    await expect(service.verify(await token(first))).rejects.toBeInstanceOf(IdentityProviderUnavailableError);
  });

  it('requires a client id or extra audience while audience validation is on', () => {
    expect(() => loadConfig({ OIDC_ISSUER: issuer })).toThrow('OIDC_CLIENT_ID');
    expect(() => loadConfig({ PUBLIC_ADMIN_ORIGIN: 'https://admin.example.com/path' })).toThrow(
      'PUBLIC_ADMIN_ORIGIN',
    );
  });
});
