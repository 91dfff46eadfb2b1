import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminCli } from '../support/admin-cli.js';
import { FakeUpstream } from '../support/fake-upstream.js';
import { call } from '../support/http.js';
import { startTestApp, type SeededOrganization, type TestApp } from '../support/test-app.js';
import { json, startLocalServer, type LocalServer } from '../support/tools-local-servers.js';
import {
  asApplyDocument,
  ATTACKED_NAMES,
  envFieldAttacks,
  forbiddenValues,
  GRANTED,
  privateOrigins,
  SERVICE_SECRETS,
  snapshot,
  tablesContaining,
  TOOL_SECRET,
  urlFieldAttacks,
} from './support/tenant-attack.js';

/**
 * Issue 24 (part A), tried as an attacker holding an organization's admin key: nothing it
 * configures may name the service's environment (only what the platform granted), reach a
 * private address (only what the platform allowed for its organization), create or shadow an
 * organization, or change a field the platform sets. Each refusal is a 4xx in the envelope,
 * nothing changes in the database, and the loopback listener receives nothing.
 */
describe('tenant configuration attacks', () => {
  let app: TestApp;
  let acme: SeededOrganization;
  let globex: SeededOrganization;
  let trap: LocalServer;
  let workDir: string;
  const cli = adminCli(() => ({ ...app.database.env }));

  beforeAll(async () => {
    trap = await startLocalServer((_request, res) => json(res, 200, { ok: true }));
    app = await startTestApp({
      ...SERVICE_SECRETS,
      [GRANTED.name]: GRANTED.value,
      [TOOL_SECRET.name]: TOOL_SECRET.value,
    });
    acme = await app.seedOrganization('acme');
    globex = await app.seedOrganization('globex');
    workDir = await mkdtemp(join(tmpdir(), 'switchboard-tenant-attacks-'));
  });

  afterAll(async () => {
    await app?.close();
    await trap?.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  const admin = (method: string, path: string, body?: unknown, key = acme.keys.admin) =>
    call(app.baseUrl, method, `/admin/v1${path}`, { headers: { authorization: `Bearer ${key}` }, body });
  const assistantName = () => `${acme.slug} assistant`;

  /** Refused in the envelope with `status` and `code`, naming `field`, and nothing written. */
  async function expectRefused(
    attempt: () => Promise<{ status: number; body: any }>,
    [status, code, field]: [number, string, string],
    organizationId = acme.id,
  ) {
    const before = await snapshot(app, organizationId);
    const res = await attempt();
    expect([res.status, res.body?.error?.code]).toEqual([status, code]);
    expect(Object.keys(res.body.error).sort()).toEqual(['code', 'message', 'type']);
    expect(res.body.error.message).toContain(field);
    expect(await snapshot(app, organizationId)).toEqual(before);
  }

  it('refuses every env-referencing field naming a variable not granted, by PUT and by apply', async () => {
    for (const name of ATTACKED_NAMES) {
      for (const [field, path, body] of envFieldAttacks(name, trap.origin, assistantName())) {
        const refused: [number, string, string] = [403, 'insufficient_scope', field];
        await expectRefused(() => admin('PUT', `/organizations/acme${path}`, body), refused);
        const document = asApplyDocument('acme', path, body, assistantName());
        await expectRefused(() => admin('POST', '/apply', document), refused);
      }
    }
    // Granting a service variable is refused to the platform too.
    expect(await cli.fails('orgs', 'grant-secrets', 'acme', 'DATABASE_URL')).toContain('own variables');
    expect(await cli.fails('orgs', 'grant-secrets', 'acme', 'OTEL_EXPORTER_OTLP_HEADERS')).toContain(
      'own variables',
    );
    expect(trap.requests).toEqual([]);
  });

  it('refuses every URL field on a private address or a name for one, unless the platform allowed it for the organization', async () => {
    for (const origin of privateOrigins(trap.port)) {
      for (const [field, path, body] of urlFieldAttacks(origin, assistantName())) {
        const refused: [number, string, string] = [400, 'invalid_request', field];
        await expectRefused(() => admin('PUT', `/organizations/acme${path}`, body), refused);
        await expectRefused(
          () => admin('POST', '/apply', asApplyDocument('acme', path, body, assistantName())),
          refused,
        );
      }
    }
    // Allowed for acme by the platform: acme may; globex, with the same document, still may not.
    await cli.ok('orgs', 'set-ssrf-allowlist', 'acme', `127.0.0.1:${trap.port}`);
    const [field, path, body] = urlFieldAttacks(trap.origin, assistantName())[2];
    expect((await admin('PUT', `/organizations/acme${path}`, body)).status).toBe(200);
    await expectRefused(
      () => admin('PUT', `/organizations/globex${path}`, body, globex.keys.admin),
      [400, 'invalid_request', field],
      globex.id,
    );
    await cli.ok('orgs', 'set-ssrf-allowlist', 'acme', 'none');
    expect(trap.requests).toEqual([]);
  });

  it('sends a granted key only while it is granted, and never once the grant or the host is withdrawn', async () => {
    const upstream = await new FakeUpstream().start();
    try {
      const host = new URL(upstream.url).host;
      await cli.ok('orgs', 'grant-secrets', 'acme', GRANTED.name);
      await cli.ok('orgs', 'set-ssrf-allowlist', 'acme', host);
      const model = {
        provider: 'openai-compatible',
        baseUrl: upstream.url,
        model: 'm',
        apiKeyEnv: GRANTED.name,
      };
      const put = await admin('PUT', '/organizations/acme/assistants/granted', { model });
      expect(put.status).toBe(200);
      const ask = () =>
        call(app.baseUrl, 'POST', '/v1/responses', {
          key: acme.keys.full_access,
          body: { model: put.body.id, input: 'hello' },
        });
      const first = await until(ask, (res) => res.status === 200);
      expect(first.status).toBe(200);
      expect(upstream.requests.at(-1)?.headers.authorization).toBe(`Bearer ${GRANTED.value}`);

      // The platform withdraws the grant: within the policy's cache lifetime the call is refused.
      await cli.ok('orgs', 'grant-secrets', 'acme', 'none');
      const refused = await until(ask, (res) => res.status !== 200);
      expect([refused.status, refused.body.error.code]).toEqual([503, 'upstream_unavailable']);
      const sent = upstream.requests.length;
      expect((await ask()).status).toBe(503);
      expect(upstream.requests.length).toBe(sent);

      // Granted again (answered once the policy sees it), then the host withdrawn: nothing is sent.
      await cli.ok('orgs', 'grant-secrets', 'acme', GRANTED.name);
      expect((await until(ask, (res) => res.status === 200)).status).toBe(200);
      await cli.ok('orgs', 'set-ssrf-allowlist', 'acme', 'none');
      const blocked = await until(ask, (res) => res.status !== 200);
      expect([blocked.status, blocked.body.error.type]).toEqual([503, 'server_error']);
      const reached = upstream.requests.length;
      expect((await ask()).status).toBe(503);
      expect(upstream.requests.length).toBe(reached);
      for (const request of upstream.requests) {
        for (const value of forbiddenValues(app)) expect(JSON.stringify(request)).not.toContain(value);
      }
    } finally {
      await upstream.stop();
    }
  });

  it('refuses UUID-shaped slugs everywhere, keeps an admin key on its own row, and 403s another slug', async () => {
    const uuid = randomUUID();
    expect(await cli.fails('orgs', 'create', '--slug', uuid)).toContain('shaped like an id');
    const file = join(workDir, 'uuid.json');
    await writeFile(file, JSON.stringify({ organizations: [{ slug: acme.id }] }));
    expect(await cli.fails('apply', '-f', file)).toContain('shaped like an id');

    // Its own id is its own row (no impostor named like it); another slug is 403, existing or not.
    const own = await admin('PUT', `/organizations/${acme.id}`, { name: 'Acme by id' });
    expect([own.status, own.body.id, own.body.slug]).toEqual([200, acme.id, 'acme']);
    for (const slug of ['globex', 'brand-new', uuid, globex.id]) {
      await expectRefused(
        () => admin('PUT', `/organizations/${slug}`, { name: 'x' }),
        [403, 'insufficient_scope', 'own organization'],
      );
    }
    await expectRefused(
      () => admin('POST', '/apply', { organizations: [{ slug: acme.id }] }),
      [400, 'invalid_request', 'shaped like an id'],
    );
    expect((await cli.ok('orgs', 'list')).map((o: any) => o.slug).sort()).toEqual(['acme', 'globex']);
  });

  it('refuses every platform-only field to an organization admin, with a value or null, by PUT and by apply', async () => {
    await cli.ok('orgs', 'set-token-budget', 'acme', '1000000');
    const values: Record<string, unknown> = {
      rateLimitPerMinute: 5,
      monthlyTokenBudget: 10,
      secretEnvGrants: ['PLATFORM_SHARED_KEY'],
      ssrfAllowlist: ['127.0.0.1'],
      // The platform pays for the calls and chooses their reach (docs/knowledge.md).
      embeddings: { baseUrl: `${trap.origin}/v1`, model: 'm', apiKeyEnv: 'PLATFORM_SHARED_KEY' },
    };
    for (const [field, value] of Object.entries(values)) {
      for (const attempt of [value, null]) {
        const refused: [number, string, string] = [403, 'insufficient_scope', field];
        await expectRefused(() => admin('PUT', '/organizations/acme', { [field]: attempt }), refused);
        const document = { organizations: [{ slug: 'acme', [field]: attempt }] };
        await expectRefused(() => admin('POST', '/apply', document), refused);
      }
    }
    expect(trap.requests).toEqual([]);
  });

  it('redacts every secret a tool call sent from what the model reads and the transcript stores', async () => {
    const echo = await startLocalServer((request, res) => json(res, 200, { youSent: request.headers }));
    try {
      await cli.ok('orgs', 'grant-secrets', 'acme', TOOL_SECRET.name);
      await cli.ok('orgs', 'set-ssrf-allowlist', 'acme', `127.0.0.1:${echo.port}`);
      const tool = await admin('PUT', '/organizations/acme/tools/echo', {
        kind: 'rest',
        config: {
          urlTemplate: `${echo.origin}/echo`,
          auth: { type: 'env', env: TOOL_SECRET.name },
          headers: { 'x-again': { fromEnv: TOOL_SECRET.name } },
        },
      });
      expect(tool.status).toBe(200);
      const script = [
        { match: 'echo', call: { tool: 'echo', arguments: {} } },
        { match: '.+', on: 'tool', reply: 'The tool said: {{input}}' },
      ];
      const assistant = await admin('PUT', '/organizations/acme/assistants/echoer', {
        model: { provider: 'offline', script },
        tools: ['echo'],
      });
      // Answered once the policy sees the new grant and allowlist (it caches an organization for 5 s).
      const res = await until(
        () =>
          call(app.baseUrl, 'POST', '/v1/responses', {
            key: acme.keys.full_access,
            body: { model: assistant.body.id, input: 'echo please' },
          }),
        () => echo.requests.length > 0,
      );
      expect(res.status).toBe(200);
      // The secret reached the tool's host (granted), and came back redacted.
      expect(echo.requests[0].headers.authorization).toBe(`Bearer ${TOOL_SECRET.value}`);
      expect(JSON.stringify(res.body)).toContain('[redacted]');
      expect(JSON.stringify(res.body)).not.toContain(TOOL_SECRET.value);
      expect(await tablesContaining(app, TOOL_SECRET.value)).toEqual([]);
      // No trace context went to the third-party host (its config did not opt in).
      expect(echo.requests.every((r) => r.headers.traceparent === undefined)).toBe(true);
    } finally {
      await echo.close();
    }
  });
});

/** Calls `attempt` until `done` holds (bounded: the policy caches an organization for 5 s). */
async function until<T>(attempt: () => Promise<T>, done: (value: T) => boolean, tries = 100): Promise<T> {
  for (let i = 0; ; i++) {
    const value = await attempt();
    if (done(value) || i >= tries) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
