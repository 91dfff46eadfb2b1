import fc from 'fast-check';
import { expectContractError } from './support/error-contract.js';
import {
  anyJson,
  headerBytes,
  mutatedBody,
  nastyText,
  reshapedBody,
  percentEncode,
  rawHttpCase,
  toJsonText,
  urlComponent,
  type RawCase,
} from './support/fuzz-arbitraries.js';
import { call, type ApiReply } from './support/http.js';
import { MCP_HEADERS, startGatewayStack, type GatewayStack } from './support/mcp-gateway-fixtures.js';
import {
  FUZZ_ADMIN_AUDIENCE,
  FUZZ_ADMIN_GROUP,
  seedFuzzWorld,
  type FuzzWorld,
} from './support/fuzz-world.js';
import { rawRequest, type RawReply } from './support/raw-http.js';
import type { SeededOrganization, TestApp } from './support/test-app.js';
import { gatewayOidcEnv } from './support/test-identity-provider.js';
import { UsageFlusher } from '../src/usage/usage-flusher.service.js';

/**
 * The property-based bad-input suite: requests generated over every route and method of the
 * service's own OpenAPI document (PUT included), with every kind of credential (an organization's
 * `admin` key and a platform administrator's token from a local identity provider as well as the
 * API keys), so that the admin API is fuzzed past authentication: wrong types and shapes, NUL,
 * surrogates and control characters, deep nesting, huge values, broken percent-encoding, odd
 * header bytes, duplicated and oversized headers, and raw malformed HTTP over a socket. Every
 * reply must be below 500, every error must be the envelope as the contract and docs/api.md
 * state it (test/support/error-contract.ts, not the code's catalogue; JSON-RPC errors only from
 * the MCP gateway after authentication), a refused request must have changed nothing stored, and
 * the process must stay healthy.
 *
 * A fresh seed each run (printed with any failure); replay one with
 * `FUZZ_SEED=<seed> npm run fuzz`. FUZZ_RUNS sets the number of generated requests (default 300;
 * `npm run fuzz` 2000) and FUZZ_TIME_LIMIT_S a time budget after which each property stops early
 * without failing (the raw-HTTP one gets half); CI sets both on its embedded run (.ci/run).
 */
const SEED = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const RUNS = Number(process.env.FUZZ_RUNS ?? 0) || 300;
const TIME_LIMIT_MS = Number(process.env.FUZZ_TIME_LIMIT_S ?? 0) * 1000 || undefined;
const TIMEOUT_MS = 60_000 + (TIME_LIMIT_MS ?? RUNS * 2_000);
/** fast-check's options for one property: the seed, a bound, and the replay command on failure. */
const PARAMETERS: fc.Parameters<unknown> = {
  seed: SEED,
  endOnFailure: true,
  ...(TIME_LIMIT_MS ? { interruptAfterTimeLimit: TIME_LIMIT_MS, markInterruptAsFailure: false } : {}),
};
/** Rethrows a failed property with the command that replays it. */
async function replayable(run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (error) {
    throw new Error(`FUZZ_SEED=${SEED} npm run fuzz -- replays this run.\n${(error as Error).message}`, {
      cause: error,
    });
  }
}

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

type Credential =
  'full_access' | 'user' | 'assistant' | 'admin' | 'platform' | 'none' | 'swb_nonsense' | 'bearer';

describe(`bad input over every route and credential (property-based, seed ${SEED})`, () => {
  let app: TestApp;
  let org: SeededOrganization;
  let operations: Operation[];
  let tables: string[];
  let world: FuzzWorld;
  let tokens: string[];
  let platformToken: string;
  let stack: GatewayStack;

  beforeAll(async () => {
    stack = await startGatewayStack(
      (provider) => ({
        ...gatewayOidcEnv(provider),
        ADMIN_GROUP: FUZZ_ADMIN_GROUP,
        ADMIN_AUDIENCE: FUZZ_ADMIN_AUDIENCE,
        RATE_LIMIT_DEFAULT_PER_MINUTE: '0',
        BODY_LIMIT: '256kb',
        MAX_HEADER_SIZE: '16kb',
      }),
      { alice: ['/acme/engineering'], root: [FUZZ_ADMIN_GROUP] },
    );
    app = stack.app;
    org = await app.seedOrganization('fuzz');

    const document = (await call(app.baseUrl, 'GET', '/openapi.json')).body;
    operations = Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(
      ([path, item]) =>
        Object.entries(item)
          .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete', 'options'].includes(method))
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
    // The sweep must see the admin writes: a document that lost them would fuzz less, silently.
    expect(operations.filter((operation) => operation.method === 'PUT').length).toBeGreaterThanOrEqual(5);
    expect(
      operations.filter((operation) => operation.path.startsWith('/admin/v1')).length,
    ).toBeGreaterThanOrEqual(15);

    world = await seedFuzzWorld(app, org, stack.api);
    tokens = [await stack.idp.mint(), await stack.idp.mint({ groups: ['/globex/sales'] })];
    platformToken = await stack.idp.mint({
      sub: 'root',
      groups: [FUZZ_ADMIN_GROUP],
      aud: FUZZ_ADMIN_AUDIENCE,
    });
    // The credentials work, so a refusal in the sweep is about the request, not the setup.
    const asAdmin = await call(app.baseUrl, 'GET', `/admin/v1/organizations/${org.slug}`, {
      headers: { authorization: `Bearer ${org.keys.admin}` },
    });
    const asPlatform = await call(app.baseUrl, 'GET', '/admin/v1/organizations', {
      headers: { authorization: `Bearer ${platformToken}` },
    });
    expect([asAdmin.status, asPlatform.status]).toEqual([200, 200]);

    const listed = await app.dataSource.query<{ table_name: string }[]>(
      `SELECT table_name FROM information_schema.tables
        WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
    );
    // api_keys records each key's last use: it changes on every authenticated request. The audit
    // log may record denied attempts (issue 24), which a refusal is allowed to write.
    tables = listed
      .map((row) => row.table_name)
      .filter((name) => name !== 'api_keys' && name !== 'audit_log' && !/migration/.test(name));
  }, 120_000);

  afterAll(() => stack?.close());

  /** Every stored row, hashed per table. */
  async function stored(): Promise<Record<string, string>> {
    const columns = tables.map(
      (table) =>
        `(SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) FROM "${table}" t) AS "${table}"`,
    );
    const [row] = await app.dataSource.query<Record<string, string>[]>(`SELECT ${columns.join(', ')}`);
    return row;
  }

  const pause = () => new Promise((resolve) => setTimeout(resolve, 50));

  async function ingesting(): Promise<boolean> {
    const [row] = await app.dataSource.query<{ pending: string }[]>(
      `SELECT count(*) AS pending FROM vector_store_files WHERE status = 'in_progress'`,
    );
    return Number(row.pending) > 0;
  }

  /**
   * The stored rows once background ingestion is done: a file a generated request attached to a
   * vector store is ingested on its own, and those writes are not the next request's doing.
   */
  async function storedAtRest(): Promise<Record<string, string>> {
    // Accepted turns leave their usage pending for the replica's flush (docs/usage.md): flushed
    // here, so that a timed flush cannot land between the snapshots around a refused request.
    await app.running.app.get(UsageFlusher).flush();
    const deadline = Date.now() + 30_000;
    let waited = false;
    while ((await ingesting()) && Date.now() < deadline) {
      waited = true;
      await pause();
    }
    let snapshot = await stored();
    // The last file's completion may update its batch and store in statements of their own.
    while (waited && Date.now() < deadline) {
      await pause();
      const next = await stored();
      if (JSON.stringify(next) === JSON.stringify(snapshot)) break;
      snapshot = next;
    }
    return snapshot;
  }

  async function expectHealthy(): Promise<void> {
    expect((await call(app.baseUrl, 'GET', '/healthz')).status).toBe(200);
    expect((await call(app.baseUrl, 'GET', '/readyz')).status).toBe(200);
  }

  function bodyArbitrary(operation: Operation): fc.Arbitrary<string | undefined> {
    const bases = world.bodiesFor(operation.path);
    return fc.oneof(
      { arbitrary: fc.constantFrom(...bases).map((body) => JSON.stringify(body)), weight: 2 },
      {
        arbitrary: fc
          .constantFrom(...bases)
          .chain(mutatedBody)
          .map(toJsonText),
        weight: 6,
      },
      {
        arbitrary: fc
          .constantFrom(...bases)
          .chain(reshapedBody)
          .map(toJsonText),
        weight: 3,
      },
      { arbitrary: anyJson.map(toJsonText), weight: 2 },
      { arbitrary: fc.oneof(nastyText, fc.constant('{"a":'), fc.constant('')), weight: 1 },
      { arbitrary: fc.constant(undefined), weight: 1 },
    );
  }

  /** Mostly the credential the route is for (admin routes: an admin key or a platform token). */
  function credentialArbitrary(operation: Operation): fc.Arbitrary<Credential> {
    const bad = fc.constantFrom<Credential>('none', 'swb_nonsense', 'bearer', 'user');
    return operation.path.startsWith('/admin/')
      ? mostly(fc.constantFrom<Credential>('admin', 'admin', 'platform', 'platform', 'full_access'), bad)
      : mostly(
          fc.constantFrom<Credential>('full_access', 'full_access', 'user', 'assistant', 'admin', 'platform'),
          bad,
        );
  }

  function requestArbitrary(): fc.Arbitrary<FuzzRequest> {
    return fc.constantFrom(...operations).chain((operation) => {
      const segments = operation.path.split('/').map((segment) => {
        const name = /^\{(\w+)\}$/.exec(segment)?.[1];
        return name === undefined ? fc.constant(segment) : urlComponent(world.valid[name] ?? ['x']);
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
            urlComponent(world.valid.query),
          ),
          { minLength: 1, maxLength: 3 },
        ),
        2,
      );
      const isGateway = operation.path.startsWith('/mcp-gateway/{name}') && operation.method === 'POST';
      const headers = fc.record({
        auth: credentialArbitrary(operation),
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
          else if (h.auth === 'platform') headerMap.authorization = `Bearer ${platformToken}`;
          else if (h.auth === 'admin') headerMap.authorization = `Bearer ${org.keys.admin}`;
          else if (h.auth === 'swb_nonsense') headerMap['x-api-key'] = 'swb_nonsense';
          else if (h.auth !== 'none') headerMap['x-api-key'] = org.keys[h.auth];
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
      await replayable(() =>
        fc.assert(
          fc.asyncProperty(requestArbitrary(), async (request) => {
            const what = `${request.method} ${request.path} ${JSON.stringify(request.headers).slice(0, 200)} body ${String(request.body).slice(0, 200)}`;
            const before = await storedAtRest();
            const reply: ApiReply = await call(app.baseUrl, request.method, request.path, {
              headers: request.headers,
              body: request.body,
            });
            if (reply.status >= 500)
              throw new Error(`${reply.status} for ${what}: ${JSON.stringify(reply.body)}`);
            if (reply.status >= 400) {
              const gatewayRpc = /^\/mcp-gateway\/[^/]+\/?(\?|$)/i.test(request.path) && reply.body?.jsonrpc;
              if (gatewayRpc) expectJsonRpcError(reply.body, what);
              else expectContractError(reply.status, reply.body, what, reply.headers);
              const after = await stored();
              if (JSON.stringify(after) !== JSON.stringify(before)) {
                throw new Error(`a refused request changed stored rows: ${what}`);
              }
            }
            if (++sent % 25 === 0) await expectHealthy();
          }),
          { ...PARAMETERS, numRuns: RUNS },
        ),
      );
      await expectHealthy();
    },
    TIMEOUT_MS,
  );

  it(
    'takes every operation with an admin key and a platform token past authentication, in the envelope when refusing',
    async () => {
      const deniedToPlatform: string[] = [];
      for (const operation of operations) {
        const path = operation.path.replace(/\{(\w+)\}/g, (_, name: string) => world.valid[name]?.[0] ?? 'x');
        // Each valid body, and the first one inside an array of arrays (issue 24 item 8's shape).
        const bases = world.bodiesFor(operation.path);
        const bodies: (string | undefined)[] = operation.hasBody
          ? [...bases, [[bases[0]]]].map((body) => JSON.stringify(body))
          : [undefined];
        for (const [credential, value] of [
          ['admin', org.keys.admin],
          ['platform', platformToken],
        ] as const) {
          for (const body of bodies) {
            const headers: Record<string, string> = {
              'content-type': 'application/json',
              authorization: `Bearer ${value}`,
            };
            if (operation.path.startsWith('/mcp-gateway/{name}') && operation.method === 'POST') {
              Object.assign(headers, MCP_HEADERS, { authorization: `Bearer ${tokens[0]}` });
            }
            const what = `${operation.method} ${path} as ${credential} body ${String(body).slice(0, 200)}`;
            const reply = await call(app.baseUrl, operation.method, path, { headers, body });
            if (reply.status >= 500)
              throw new Error(`${reply.status} for ${what}: ${JSON.stringify(reply.body)}`);
            if (reply.status >= 400 && !reply.body?.jsonrpc)
              expectContractError(reply.status, reply.body, what, reply.headers);
            if (
              credential === 'platform' &&
              operation.path.startsWith('/admin/') &&
              [401, 403].includes(reply.status)
            ) {
              deniedToPlatform.push(what);
            }
          }
        }
      }
      expect(deniedToPlatform).toEqual([]);
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
      await replayable(() =>
        fc.assert(
          fc.asyncProperty(rawHttpCase(targets, org.keys.full_access), async (raw: RawCase) => {
            const before = await storedAtRest();
            const reply: RawReply = await rawRequest(app.baseUrl, raw.bytes);
            const what = `${raw.label}: ${JSON.stringify(raw.bytes.toString('latin1').slice(0, 300))}`;
            if (reply.status === 0)
              throw new Error(`no HTTP reply to ${what}: ${JSON.stringify(reply.raw.slice(0, 200))}`);
            if (reply.status >= 500)
              throw new Error(`${reply.status} for ${what}: ${reply.raw.slice(0, 300)}`);
            if (reply.status >= 400) {
              if (reply.body?.jsonrpc) expectJsonRpcError(reply.body, what);
              else expectContractError(reply.status, reply.body, what, new Headers(reply.headers));
              if (JSON.stringify(await stored()) !== JSON.stringify(before)) {
                throw new Error(`a refused request changed stored rows: ${what}`);
              }
            }
          }),
          {
            ...PARAMETERS,
            numRuns: Math.ceil(RUNS / 2),
            ...(TIME_LIMIT_MS ? { interruptAfterTimeLimit: TIME_LIMIT_MS / 2 } : {}),
          },
        ),
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
