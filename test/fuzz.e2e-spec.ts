import fc from 'fast-check';
import { ERROR_CATALOGUE, type ErrorCode } from '../src/common/errors/error-catalogue.js';
import {
  anyJson,
  headerBytes,
  mutatedBody,
  nastyText,
  percentEncode,
  rawHttpCase,
  toJsonText,
  urlComponent,
  type RawCase,
} from './support/fuzz-arbitraries.js';
import { call, type ApiReply } from './support/http.js';
import {
  INITIALIZE,
  MCP_HEADERS,
  seedGatewayWorld,
  startOrdersApi,
  type RecordingApi,
} from './support/mcp-gateway-fixtures.js';
import { rawRequest, type RawReply } from './support/raw-http.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';
import {
  gatewayOidcEnv,
  startTestIdentityProvider,
  type TestIdentityProvider,
} from './support/test-identity-provider.js';

/**
 * The property-based bad-input suite: requests generated over every route of the service's own
 * OpenAPI document (wrong types, NUL, surrogates and control characters, deep nesting, huge
 * values, broken percent-encoding, odd header bytes, duplicated and oversized headers) and raw
 * malformed HTTP over a socket. Every reply must be below 500, every error must be the envelope
 * of the catalogue (JSON-RPC errors only from the MCP gateway after authentication), a refused
 * request must have changed nothing stored, and the process must stay healthy.
 *
 * Seeded and bounded for every CI run; `npm run fuzz` runs longer (FUZZ_RUNS, FUZZ_SEED).
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20_251_125);
const RUNS = Number(process.env.FUZZ_RUNS ?? 0) || 150;
const TIMEOUT_MS = 60_000 + RUNS * 2_000;

interface Operation {
  method: string;
  path: string;
  queryNames: string[];
  hasBody: boolean;
}

interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

describe('bad input over every route (property-based)', () => {
  let idp: TestIdentityProvider;
  let api: RecordingApi;
  let app: TestApp;
  let org: SeededOrganization;
  let operations: Operation[];
  let tables: string[];
  /** Values a careful client would put in paths and queries, so generated requests get deep. */
  const valid: Record<string, string[]> = {};
  let validBodies: Record<string, unknown[]>;
  let tokens: string[];

  beforeAll(async () => {
    idp = await startTestIdentityProvider({ alice: ['/acme/engineering'] });
    api = await startOrdersApi();
    app = await startTestApp({
      ...gatewayOidcEnv(idp),
      SSRF_ALLOWLIST: new URL(api.url).host,
      RATE_LIMIT_DEFAULT_PER_MINUTE: '0',
      BODY_LIMIT: '256kb',
      MAX_HEADER_SIZE: '16kb',
    });
    await seedGatewayWorld(app, api);
    org = await app.seedOrganization('fuzz');

    const document = (await call(app.baseUrl, 'GET', '/openapi.json')).body;
    operations = Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(
      ([path, item]) =>
        Object.entries(item)
          .filter(([method]) => ['get', 'post', 'delete', 'options'].includes(method))
          .map(([method, operation]) => ({
            method: method.toUpperCase(),
            path,
            queryNames: ((operation.parameters ?? []) as { $ref?: string; in?: string; name?: string }[])
              .map((parameter) =>
                parameter.$ref ? document.components.parameters[parameter.$ref.split('/').pop()!] : parameter,
              )
              .filter((parameter) => parameter.in === 'query')
              .map((parameter) => parameter.name as string),
            hasBody: operation.requestBody !== undefined,
          })),
    );

    // Something to read, so that reads and deletes reach the database.
    const asst = `asst_${org.assistantId}`;
    await call(app.baseUrl, 'POST', '/v1/user-claims', {
      key: org.keys.full_access,
      body: { userId: 'fz', claimKey: 'plan', claimValue: { tier: 'gold' } },
    });
    const turn = await call(app.baseUrl, 'POST', '/v1/responses', {
      key: org.keys.full_access,
      headers: { 'x-user-id': 'fz' },
      body: { model: asst, input: 'hello' },
    });
    const history = await call(app.baseUrl, 'GET', '/v1/chat/history/conversations', {
      key: org.keys.full_access,
      headers: { 'x-user-id': 'fz' },
    });
    Object.assign(valid, {
      userId: ['fz', 'nobody'],
      claimKey: ['plan', 'none'],
      id: [turn.body.id, history.body[0].id, `resp_${org.assistantId}`],
      itemId: [org.assistantId, 'mem_1'],
      name: ['acme-ide', 'globex-ide', 'nope'],
      query: [asst, '1', '100', 'abc', history.body[0].id],
    });
    validBodies = {
      '/v1/responses': [
        { model: asst, input: 'hi' },
        {
          model: asst,
          input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }] }],
          instructions: 'Be brief.',
          metadata: { a: 'b' },
        },
        {
          model: asst,
          input: 'stream it',
          stream: true,
          tools: [{ type: 'function', name: 'f', parameters: {} }],
        },
      ],
      claim: [{ userId: 'fz', claimKey: 'k', claimValue: { a: [1, 'x', null] } }],
      bulk: [
        {
          claims: [
            { userId: 'fz', claimKey: 'a', claimValue: 1 },
            { userId: 'fy', claimKey: 'b', claimValue: 'x' },
          ],
        },
      ],
      mcp: [
        INITIALIZE,
        {
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'order_status', arguments: { id: '7' } },
        },
      ],
    };
    tokens = [await idp.mint(), await idp.mint({ groups: ['/globex/sales'] })];

    const listed = await app.dataSource.query<{ table_name: string }[]>(
      `SELECT table_name FROM information_schema.tables
        WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
    );
    // api_keys records each key's last use: it changes on every authenticated request.
    tables = listed
      .map((row) => row.table_name)
      .filter((name) => name !== 'api_keys' && !/migration/.test(name));
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await Promise.all([idp?.close(), api?.close()]);
  });

  /** Every stored row, hashed per table. */
  async function stored(): Promise<Record<string, string>> {
    const columns = tables.map(
      (table) =>
        `(SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) FROM "${table}" t) AS "${table}"`,
    );
    const [row] = await app.dataSource.query<Record<string, string>[]>(`SELECT ${columns.join(', ')}`);
    return row;
  }

  async function expectHealthy(): Promise<void> {
    expect((await call(app.baseUrl, 'GET', '/healthz')).status).toBe(200);
    expect((await call(app.baseUrl, 'GET', '/readyz')).status).toBe(200);
  }

  function bodyArbitrary(operation: Operation): fc.Arbitrary<string | undefined> {
    const bases = operation.path.startsWith('/mcp-gateway')
      ? validBodies.mcp
      : operation.path.endsWith('/bulk')
        ? validBodies.bulk
        : operation.path.includes('user-claims')
          ? validBodies.claim
          : (validBodies[operation.path] ?? [{}]);
    return fc.oneof(
      { arbitrary: fc.constantFrom(...bases).map((body) => JSON.stringify(body)), weight: 2 },
      {
        arbitrary: fc
          .constantFrom(...bases)
          .chain(mutatedBody)
          .map(toJsonText),
        weight: 8,
      },
      { arbitrary: anyJson.map(toJsonText), weight: 3 },
      { arbitrary: fc.oneof(nastyText, fc.constant('{"a":'), fc.constant('')), weight: 1 },
      { arbitrary: fc.constant(undefined), weight: 1 },
    );
  }

  function requestArbitrary(): fc.Arbitrary<FuzzRequest> {
    return fc.constantFrom(...operations).chain((operation) => {
      const segments = operation.path.split('/').map((segment) => {
        const name = /^\{(\w+)\}$/.exec(segment)?.[1];
        return name === undefined ? fc.constant(segment) : urlComponent(valid[name] ?? ['x']);
      });
      // Mostly one thing wrong at a time, so that requests get past the edge and deep into routes.
      const query = mostly(
        fc.constant([] as [string, string][]),
        fc.array(
          fc.tuple(
            fc.oneof(
              fc.constantFrom(...operation.queryNames, 'limit', 'after'),
              nastyText.map(percentEncode),
            ),
            urlComponent(valid.query),
          ),
          { minLength: 1, maxLength: 3 },
        ),
        2,
      );
      const isGateway = operation.path.startsWith('/mcp-gateway/{name}') && operation.method === 'POST';
      const headers = fc.record({
        auth: mostly(
          fc.constantFrom('full_access', 'full_access', 'user', 'assistant'),
          fc.constantFrom('none', 'swb_nonsense', 'bearer'),
        ),
        'x-user-id': mostly(fc.constantFrom('fz', 'fy', undefined), headerBytes),
        'x-user-token': mostly(fc.constant(undefined), headerBytes),
        'x-user-tokens': mostly(
          fc.constant(undefined),
          fc.oneof(
            fc.dictionary(nastyText, nastyText, { maxKeys: 2 }).map((tokens) =>
              Buffer.from(JSON.stringify(tokens), 'utf8')
                .toString('latin1')
                .replace(/[^\t\x20-\x7e\x80-\xff]/g, ''),
            ),
            headerBytes,
          ),
        ),
        'content-type': mostly(
          fc.constant('application/json'),
          fc.constantFrom(
            'application/json; charset=utf-8',
            'application/json; charset=latin1',
            'text/plain',
            'application/x-www-form-urlencoded',
          ),
        ),
        token: mostly(fc.constant(0), fc.constantFrom(1, -1)),
        origin: mostly(fc.constant(undefined), fc.constant('https://evil.example')),
      });
      const method = fc.oneof(
        { arbitrary: fc.constant(operation.method), weight: 6 },
        { arbitrary: fc.constantFrom('GET', 'POST', 'DELETE', 'PUT', 'PATCH'), weight: 1 },
      );
      return fc
        .record({ segments: fc.tuple(...segments), query, headers, method, body: bodyArbitrary(operation) })
        .map(({ segments: parts, query: pairs, headers: h, method: chosen, body }) => {
          const headerMap: Record<string, string> = { 'content-type': h['content-type'] };
          if (h.auth === 'bearer') headerMap.authorization = `Bearer ${org.keys.full_access}`;
          else if (h.auth === 'swb_nonsense') headerMap['x-api-key'] = 'swb_nonsense';
          else if (h.auth !== 'none') headerMap['x-api-key'] = org.keys[h.auth as 'user'];
          for (const name of ['x-user-id', 'x-user-token', 'x-user-tokens'] as const) {
            const value = h[name];
            if (value !== undefined && value !== '') headerMap[name] = value;
          }
          if (isGateway) {
            Object.assign(headerMap, MCP_HEADERS, { 'content-type': h['content-type'] });
            if (h.token >= 0) headerMap.authorization = `Bearer ${tokens[h.token]}`;
            if (h.origin) headerMap.origin = h.origin;
          }
          const search = pairs.map(([name, value]) => `${name}=${value}`).join('&');
          return {
            method: chosen,
            path: parts.join('/') + (search ? `?${search}` : ''),
            headers: headerMap,
            body: ['GET', 'OPTIONS'].includes(chosen) ? undefined : body,
          };
        });
    });
  }

  /** The catalogue's envelope, with the status its code has. */
  function expectEnvelope(status: number, body: any, what: string): void {
    const error = body?.error;
    const code = error?.code as ErrorCode | undefined;
    const fine =
      typeof body === 'object' &&
      Object.keys(body).length === 1 &&
      typeof error === 'object' &&
      Object.keys(error).sort().join() === 'code,message,type' &&
      typeof error.message === 'string' &&
      code !== undefined &&
      ERROR_CATALOGUE[code]?.status === status &&
      ERROR_CATALOGUE[code].type === error.type;
    if (!fine)
      throw new Error(
        `not the envelope for ${what}: ${status} ${String(JSON.stringify(body)).slice(0, 300)}`,
      );
  }

  function expectJsonRpcError(body: any, what: string): void {
    const fine =
      body?.jsonrpc === '2.0' &&
      typeof body.error?.code === 'number' &&
      typeof body.error?.message === 'string';
    if (!fine)
      throw new Error(`not a JSON-RPC error for ${what}: ${String(JSON.stringify(body)).slice(0, 300)}`);
  }

  it(
    `answers ${RUNS} generated requests over every documented route without a 5xx, always in the envelope, storing nothing when refusing`,
    async () => {
      let sent = 0;
      await fc.assert(
        fc.asyncProperty(requestArbitrary(), async (request) => {
          const what = `${request.method} ${request.path} ${JSON.stringify(request.headers).slice(0, 200)} body ${String(request.body).slice(0, 200)}`;
          const before = await stored();
          const reply: ApiReply = await call(app.baseUrl, request.method, request.path, {
            headers: request.headers,
            body: request.body,
          });
          if (reply.status >= 500)
            throw new Error(`${reply.status} for ${what}: ${JSON.stringify(reply.body)}`);
          if (reply.status >= 400) {
            const gatewayRpc = /^\/mcp-gateway\/[^/]+\/?(\?|$)/i.test(request.path) && reply.body?.jsonrpc;
            if (gatewayRpc) expectJsonRpcError(reply.body, what);
            else expectEnvelope(reply.status, reply.body, what);
            const after = await stored();
            if (JSON.stringify(after) !== JSON.stringify(before)) {
              throw new Error(`a refused request changed stored rows: ${what}`);
            }
          }
          if (++sent % 25 === 0) await expectHealthy();
        }),
        { seed: SEED, numRuns: RUNS, endOnFailure: true },
      );
      await expectHealthy();
    },
    TIMEOUT_MS,
  );

  it(
    `answers ${Math.ceil(RUNS / 2)} raw malformed HTTP/1.1 requests over a socket in the envelope, or serves them`,
    async () => {
      const targets = [
        '/healthz',
        '/v1/user-claims',
        '/v1/user-claims/fz',
        '/v1/memory',
        '/v1/responses',
        '/mcp-gateway/acme-ide',
        '/nowhere',
      ];
      await fc.assert(
        fc.asyncProperty(rawHttpCase(targets, org.keys.full_access), async (raw: RawCase) => {
          const before = await stored();
          const reply: RawReply = await rawRequest(app.baseUrl, raw.bytes);
          const what = `${raw.label}: ${JSON.stringify(raw.bytes.toString('latin1').slice(0, 300))}`;
          if (reply.status === 0)
            throw new Error(`no HTTP reply to ${what}: ${JSON.stringify(reply.raw.slice(0, 200))}`);
          if (reply.status >= 500) throw new Error(`${reply.status} for ${what}: ${reply.raw.slice(0, 300)}`);
          if (reply.status >= 400) {
            if (reply.body?.jsonrpc) expectJsonRpcError(reply.body, what);
            else expectEnvelope(reply.status, reply.body, what);
            if (JSON.stringify(await stored()) !== JSON.stringify(before)) {
              throw new Error(`a refused request changed stored rows: ${what}`);
            }
          }
        }),
        { seed: SEED, numRuns: Math.ceil(RUNS / 2), endOnFailure: true },
      );
      await expectHealthy();
    },
    TIMEOUT_MS,
  );
});

/** `good` five times in six (or `weight` to one), else `bad`. */
function mostly<T>(good: fc.Arbitrary<T>, bad: fc.Arbitrary<T>, weight = 5): fc.Arbitrary<T> {
  return fc.oneof({ arbitrary: good, weight }, { arbitrary: bad, weight: 1 });
}
