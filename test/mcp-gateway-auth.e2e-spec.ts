import { base64url, generateKeyPair, SignJWT } from 'jose';
import { call, type ApiReply } from './support/http.js';
import {
  INITIALIZE,
  MCP_HEADERS,
  startGatewayStack,
  type GatewayStack,
  type RecordingApi,
} from './support/mcp-gateway-fixtures.js';
import type { TestApp } from './support/test-app.js';
import type { TestIdentityProvider } from './support/test-identity-provider.js';

const ADMIN_ORIGIN = 'https://admin.example.test';
const METADATA = `${ADMIN_ORIGIN}/mcp-gateway/acme-ide/.well-known/oauth-protected-resource`;
const CHALLENGE = `Bearer resource_metadata="${METADATA}"`;

/**
 * Every way a bearer token can be wrong, each sent as a `tools/call` so that a wrong answer
 * would show up at the tool's API. Tokens are minted with the provider's own key (or another)
 * so that exactly one property is off.
 */
describe('MCP gateway: bearer token verification', () => {
  let idp: TestIdentityProvider;
  let api: RecordingApi;
  let app: TestApp;
  const now = () => Math.floor(Date.now() / 1000);

  let stack: GatewayStack;

  beforeAll(async () => {
    stack = await startGatewayStack((provider) => ({
      OIDC_ISSUER: provider.issuer,
      OIDC_CLIENT_ID: provider.audience,
      OIDC_EXTRA_AUDIENCES: provider.clientId,
      OIDC_CLOCK_SKEW_SECONDS: '30',
      PUBLIC_ADMIN_ORIGIN: ADMIN_ORIGIN,
    }));
    ({ idp, api, app } = stack);
  });

  afterAll(() => stack?.close());

  const toolCall = (authorization?: string): Promise<ApiReply> =>
    call(app.baseUrl, 'POST', '/mcp-gateway/acme-ide', {
      headers: { ...MCP_HEADERS, ...(authorization === undefined ? {} : { authorization }) },
      body: {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'order_status', arguments: { id: '9' } },
      },
    });

  /** 401 invalid_token with the challenge naming the error; the tool never ran. */
  async function expectInvalid(authorization: string, message: RegExp): Promise<void> {
    const before = api.received.length;
    const res = await toolCall(authorization);
    expect(res.status).toBe(401);
    expect(res.body.error).toEqual({
      type: 'authentication_error',
      code: 'invalid_token',
      message: expect.any(String),
    });
    expect(res.body.error.message).toMatch(message);
    const challenge = res.headers.get('www-authenticate') ?? '';
    expect(challenge.startsWith(`${CHALLENGE}, error="invalid_token", error_description="`)).toBe(true);
    expect(api.received.length).toBe(before);
  }

  it('runs the tool for a valid token (the control for every case below)', async () => {
    const res = await toolCall(`Bearer ${await idp.mint()}`);
    expect(res.status).toBe(200);
    expect(res.body.result.isError).toBeFalsy();
    expect(res.body.result.content[0].text).toContain('shipped');
    // The scheme is case-insensitive.
    expect((await toolCall(`bearer ${await idp.mint()}`)).status).toBe(200);
  });

  it('challenges a request without a token, without an error code', async () => {
    const res = await toolCall();
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(CHALLENGE);
    expect(res.body.error).toMatchObject({ type: 'authentication_error', code: 'missing_token' });
  });

  it('refuses a malformed Authorization header', async () => {
    await expectInvalid('Basic YWxpY2U6c2VjcmV0', /Bearer <access token>/);
    await expectInvalid('Bearer', /Bearer <access token>/);
    await expectInvalid(`Bearer ${await idp.mint()} extra`, /Bearer <access token>/);
    await expectInvalid('Bearer not-a-jwt', /well-formed/);
  });

  it('refuses an expired token and one not valid yet, beyond the clock skew', async () => {
    await expectInvalid(`Bearer ${await idp.mint({ iat: now() - 600, exp: now() - 120 })}`, /expired/);
    await expectInvalid(`Bearer ${await idp.mint({ nbf: now() + 600 })}`, /not valid yet/);
    // Within the skew both pass.
    expect((await toolCall(`Bearer ${await idp.mint({ exp: now() - 5 })}`)).status).toBe(200);
    expect((await toolCall(`Bearer ${await idp.mint({ nbf: now() + 5 })}`)).status).toBe(200);
  });

  it('refuses a token without expiry', async () => {
    await expectInvalid(`Bearer ${await idp.mint({ exp: undefined })}`, /no expiry/);
  });

  it('refuses a token of another issuer, even signed with the right key', async () => {
    await expectInvalid(
      `Bearer ${await idp.mint({ iss: 'https://elsewhere.example/realms/acme' })}`,
      /issued/,
    );
  });

  it('refuses a token for another audience (Keycloak default "account"), and accepts the extra audience', async () => {
    await expectInvalid(`Bearer ${await idp.mint({ aud: 'account' })}`, /audience/);
    expect((await toolCall(`Bearer ${await idp.mint({ aud: ['account', idp.clientId] })}`)).status).toBe(200);
  });

  it('refuses an unsigned token (alg: none) and an HMAC-signed one', async () => {
    const encode = (value: object) => base64url.encode(JSON.stringify(value));
    const claims = { iss: idp.issuer, aud: idp.audience, exp: now() + 300, groups: ['/acme/engineering'] };
    await expectInvalid(`Bearer ${encode({ alg: 'none', typ: 'JWT' })}.${encode(claims)}.`, /algorithm/);
    const hmac = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', kid: idp.kid })
      .sign(new TextEncoder().encode('a shared secret anyone could guess'));
    await expectInvalid(`Bearer ${hmac}`, /algorithm/);
  });

  it("refuses a token signed by another key, under the provider's key id or an unknown one", async () => {
    const { privateKey } = await generateKeyPair('RS256');
    await expectInvalid(`Bearer ${await idp.mint({}, { key: privateKey })}`, /signature/);
    await expectInvalid(
      `Bearer ${await idp.mint({}, { key: privateKey, kid: 'rotated-away' })}`,
      /signature/,
    );
  });

  it('refuses a token without groups, or with bare group names only', async () => {
    await expectInvalid(`Bearer ${await idp.mint({ groups: undefined })}`, /groups/);
    await expectInvalid(`Bearer ${await idp.mint({ groups: [] })}`, /groups/);
    await expectInvalid(`Bearer ${await idp.mint({ groups: ['acme', 'engineering'] })}`, /full group paths/);
  });

  it('refuses an ID token of the provider', async () => {
    await expectInvalid(`Bearer ${await idp.mint({ typ: 'ID' })}`, /not an access token/);
    await expectInvalid(`Bearer ${await idp.mint({}, { typ: 'JOSE+JSON' })}`, /not an access token/);
  });

  it('answers 403 to a valid token of another organization, and changes nothing', async () => {
    const before = api.received.length;
    const res = await toolCall(`Bearer ${await idp.mint({ groups: ['/globex/sales', '/acmeish'] })}`);
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ type: 'authentication_error', code: 'insufficient_scope' });
    expect(res.headers.get('www-authenticate')).toMatch(
      new RegExp(`^${CHALLENGE.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, error="insufficient_scope"`),
    );
    expect(api.received.length).toBe(before);
  });

  it('accepts the organization from any of several group paths', async () => {
    const res = await call(app.baseUrl, 'POST', '/mcp-gateway/acme-ide', {
      headers: {
        ...MCP_HEADERS,
        authorization: `Bearer ${await idp.mint({ groups: ['/globex/sales', '/acme/engineering/backend'] })}`,
      },
      body: INITIALIZE,
    });
    expect(res.status).toBe(200);
    expect(res.body.result.protocolVersion).toEqual(expect.any(String));
  });
});
