import { envelopeViolation } from '../support/error-contract.js';
import { allReshapedBodies } from '../support/fuzz-arbitraries.js';
import {
  FUZZ_ADMIN_AUDIENCE,
  FUZZ_ADMIN_GROUP,
  seedFuzzWorld,
  type FuzzWorld,
} from '../support/fuzz-world.js';
import { call } from '../support/http.js';
import { startGatewayStack, type GatewayStack } from '../support/mcp-gateway-fixtures.js';
import type { SeededOrganization } from '../support/test-app.js';
import { gatewayOidcEnv } from '../support/test-identity-provider.js';

interface BodyOperation {
  method: string;
  path: string;
}

/**
 * Issue 24's sweep of body shapes: every operation of the OpenAPI document that takes a JSON
 * body (the class-validator DTO routes, and the hand-validated ones beside them), sent each valid
 * body with the shape of one value changed — arrays where objects are declared and arrays of
 * arrays, objects where scalars are, scalars where arrays are, extra nesting — exhaustively, with
 * a credential that may write. Never a 5xx; every refusal is the contract's envelope (oracle from
 * the spec and docs/api.md); a refused write stores nothing. The MCP gateway's JSON-RPC bodies
 * are the fuzz suite's (test/fuzz.e2e-spec.ts).
 */
describe('body shapes on every route with a body (issue 24)', () => {
  let stack: GatewayStack;
  let org: SeededOrganization;
  let world: FuzzWorld;
  let platformToken: string;
  let operations: BodyOperation[];

  beforeAll(async () => {
    stack = await startGatewayStack(
      (provider) => ({
        ...gatewayOidcEnv(provider),
        ADMIN_GROUP: FUZZ_ADMIN_GROUP,
        ADMIN_AUDIENCE: FUZZ_ADMIN_AUDIENCE,
        RATE_LIMIT_DEFAULT_PER_MINUTE: '0',
      }),
      { root: [FUZZ_ADMIN_GROUP] },
    );
    org = await stack.app.seedOrganization('shapes');
    world = await seedFuzzWorld(stack.app, org, stack.api);
    platformToken = await stack.idp.mint({
      sub: 'root',
      groups: [FUZZ_ADMIN_GROUP],
      aud: FUZZ_ADMIN_AUDIENCE,
    });
    const document = (await call(stack.app.baseUrl, 'GET', '/openapi.json')).body;
    operations = Object.entries(document.paths as Record<string, Record<string, any>>).flatMap(
      ([path, item]) =>
        Object.entries(item)
          // JSON bodies: a multipart upload (POST /v1/files) has its own tests (test/files.e2e-spec.ts).
          .filter(
            ([method, operation]) =>
              method !== 'parameters' && operation.requestBody?.content?.['application/json'] !== undefined,
          )
          .filter(() => !path.startsWith('/mcp-gateway'))
          .map(([method]) => ({ method: method.toUpperCase(), path })),
    );
  }, 120_000);

  afterAll(() => stack?.close());

  function request(operation: BodyOperation, body: unknown) {
    const path = operation.path.replace(/\{(\w+)\}/g, (_, name: string) => world.valid[name][0]);
    const admin = operation.path.startsWith('/admin/');
    return call(stack.app.baseUrl, operation.method, path, {
      headers: admin
        ? { authorization: `Bearer ${platformToken}` }
        : { 'x-api-key': org.keys.full_access, 'x-user-id': 'fz' },
      body,
    });
  }

  async function claimRows(): Promise<number> {
    const [row] = await stack.app.dataSource.query<{ n: number }[]>(
      'SELECT count(*)::int AS n FROM user_claims WHERE organization_id = $1',
      [org.id],
    );
    return row.n;
  }

  it('covers every body of the OpenAPI document, the admin writes included', () => {
    const names = operations.map((operation) => `${operation.method} ${operation.path}`);
    expect(names).toEqual(
      expect.arrayContaining([
        'POST /v1/user-claims/bulk',
        'POST /v1/conversations',
        'PUT /admin/v1/organizations/{org}/assistants/{assistant}',
        'PUT /admin/v1/organizations/{org}/tools/{name}',
        'POST /admin/v1/apply',
      ]),
    );
    // Every operation has a valid body to reshape, not the `{}` of an unknown route.
    expect(
      operations.filter((operation) => JSON.stringify(world.bodiesFor(operation.path)) === '[{}]'),
    ).toEqual([]);
  });

  it('refuses claims given as arrays of claims (400 invalid_request), storing none', async () => {
    const before = await claimRows();
    const claim = { userId: 'u1', claimKey: 'k', claimValue: 1 };
    for (const claims of [[[claim]], [claim, [claim]], [[]], [[claim, claim]]]) {
      const reply = await call(stack.app.baseUrl, 'POST', '/v1/user-claims/bulk', {
        key: org.keys.full_access,
        body: { claims },
      });
      expect([reply.status, reply.body.error?.code]).toEqual([400, 'invalid_request']);
      expect(reply.body.error.message).toMatch(/^claims\[\d\] must be a JSON object$/);
    }
    expect(await claimRows()).toBe(before);
  });

  it('answers every reshaped body below 500, in the envelope when refusing', async () => {
    const failures: string[] = [];
    let sent = 0;
    let refused = 0;
    const cases = operations.flatMap((operation) =>
      world
        .bodiesFor(operation.path)
        .flatMap(allReshapedBodies)
        .map((body) => ({ operation, body })),
    );
    // Four at a time: the service answers each on its own, and the sweep stays within seconds.
    for (let start = 0; start < cases.length; start += 4) {
      await Promise.all(
        cases.slice(start, start + 4).map(async ({ operation, body }) => {
          const what = `${operation.method} ${operation.path} ${JSON.stringify(body).slice(0, 300)}`;
          const reply = await request(operation, body);
          sent++;
          if (reply.status >= 500)
            failures.push(`${reply.status} for ${what}: ${JSON.stringify(reply.body)}`);
          else if (reply.status >= 400) {
            refused++;
            const violation = envelopeViolation(reply.status, reply.body, reply.headers);
            if (violation)
              failures.push(`${violation} for ${what}: ${JSON.stringify(reply.body).slice(0, 300)}`);
          }
        }),
      );
    }
    expect(failures).toEqual([]);
    // Most reshapes break a declared type: a sweep that refused nothing would not be reaching validation.
    expect(refused).toBeGreaterThan(sent / 2);
    expect((await call(stack.app.baseUrl, 'GET', '/healthz')).status).toBe(200);
  }, 180_000);
});
