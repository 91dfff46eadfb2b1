import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPair } from 'jose';
import { runAdmin } from '../src/admin/admin.runner.js';
import { call, type ApiReply } from './support/http.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';
import { startTestIdentityProvider, type TestIdentityProvider } from './support/test-identity-provider.js';

const ADMIN_GROUP = '/platform/admins';
const ADMIN_AUDIENCE = 'switchboard-admin';

/** A REST tool; the literal header is a credential the audit log must never keep. */
const ORDERS_TOOL = {
  kind: 'rest',
  description: 'Status of an order',
  config: {
    method: 'GET',
    urlTemplate: 'https://orders.example.test/orders/{id}',
    headers: { 'x-orders-token': 'literal-secret-value', 'x-tenant': { fromEnv: 'ORDERS_TENANT' } },
    parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
  },
};

/** The apply document both the CLI and the API are given. */
function applyDocument(slug: string) {
  return {
    organizations: [
      {
        slug,
        name: `${slug} applied`,
        tools: [{ name: 'lookup', kind: 'rest', config: ORDERS_TOOL.config }],
        assistants: [
          {
            name: 'Applied',
            instructions: 'From apply.',
            tools: ['lookup'],
            specialists: [{ name: 'billing', role: 'Invoices' }],
          },
        ],
        gateways: [{ name: `${slug}-applied`, tools: ['lookup'] }],
      },
    ],
  };
}

/**
 * The admin HTTP API (/admin/v1) for both kinds of caller: an organization's `admin` key (its
 * organization only) and a platform administrator's token from a real OpenID provider. Every
 * change leaves an audit row, written with it.
 */
describe('admin HTTP API', () => {
  let idp: TestIdentityProvider;
  let app: TestApp;
  let acme: SeededOrganization;
  let globex: SeededOrganization;
  let platformToken: string;
  let outsiderToken: string;
  let workDir: string;

  beforeAll(async () => {
    idp = await startTestIdentityProvider({ alice: [ADMIN_GROUP], bob: ['/acme/engineering'] });
    app = await startTestApp({
      OIDC_ISSUER: idp.issuer,
      OIDC_CLIENT_ID: idp.audience,
      ADMIN_GROUP,
      ADMIN_AUDIENCE,
    });
    acme = await app.seedOrganization('acme');
    globex = await app.seedOrganization('globex');
    workDir = await mkdtemp(join(tmpdir(), 'switchboard-admin-api-'));
    // The tool's header names a variable: the platform grants it to acme (docs/admin-api.md).
    await cli('orgs', 'grant-secrets', 'acme', 'ORDERS_TENANT');
    platformToken = await idp.mint({ sub: 'alice', groups: [ADMIN_GROUP], aud: ADMIN_AUDIENCE });
    outsiderToken = await idp.mint({
      sub: 'bob',
      groups: ['/acme/engineering', '/platform'],
      aud: ADMIN_AUDIENCE,
    });
  });

  afterAll(async () => {
    await app?.close();
    await idp?.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });
  const admin = (method: string, path: string, credential: string, body?: unknown): Promise<ApiReply> =>
    call(app.baseUrl, method, `/admin/v1${path}`, { headers: bearer(credential), body });
  const auditRows = (resourceId: string): Promise<any[]> =>
    app.dataSource.query(
      'SELECT actor_type, actor_id, actor_issuer, action, resource_type, organization_id, before, after, request_id FROM audit_log WHERE resource_id = $1 ORDER BY created_at, id',
      [resourceId],
    );
  /** Rows of changes; refused requests (`denied`) are audited too but change nothing. */
  const auditCount = async (): Promise<number> =>
    Number(
      (await app.dataSource.query(`SELECT count(*)::int AS n FROM audit_log WHERE action <> 'denied'`))[0].n,
    );

  async function cli(...argv: string[]): Promise<any> {
    let stdout = '';
    let stderr = '';
    const code = await runAdmin(
      [...argv, '--json'],
      { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } },
      { ...app.database.env, INIT_CWD: workDir },
    );
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    return JSON.parse(stdout);
  }

  /** Every endpoint, for the organization `slug`, with a valid body. */
  const endpoints = (slug: string): [string, string, unknown?][] => [
    ['GET', '/organizations'],
    ['GET', `/organizations/${slug}`],
    ['PUT', `/organizations/${slug}`, { name: 'renamed' }],
    ['GET', `/organizations/${slug}/assistants`],
    ['GET', `/organizations/${slug}/assistants/${slug}%20assistant`],
    ['PUT', `/organizations/${slug}/assistants/Probe`, { instructions: 'x' }],
    ['GET', `/organizations/${slug}/assistants/${slug}%20assistant/specialists`],
    ['PUT', `/organizations/${slug}/assistants/${slug}%20assistant/specialists/probe`, { role: 'x' }],
    ['GET', `/organizations/${slug}/tools`],
    ['PUT', `/organizations/${slug}/tools/probe`, ORDERS_TOOL],
    ['GET', `/organizations/${slug}/gateways`],
    ['PUT', `/organizations/${slug}/gateways/${slug}-probe`, { tools: ['probe'] }],
    ['GET', `/organizations/${slug}/keys`],
    ['POST', `/organizations/${slug}/keys`, { name: 'probe', scopes: ['assistant'] }],
    ['POST', `/organizations/${slug}/keys/00000000-0000-4000-8000-000000000000/revoke`],
    ['POST', '/apply?dry_run=true', applyDocument(slug)],
    ['GET', '/audit-log'],
  ];

  describe('refusals', () => {
    it('refuses every endpoint without a credential, with a bad one, and with every scope but admin', async () => {
      const before = await auditCount();
      for (const [method, path, body] of endpoints('acme')) {
        const none = await call(app.baseUrl, method, `/admin/v1${path}`, { body });
        expect([path, none.status, none.body.error?.code]).toEqual([path, 401, 'missing_api_key']);
        const unknownKey = await admin(method, path, `swb_${'x'.repeat(43)}`, body);
        expect([path, unknownKey.status, unknownKey.body.error?.code]).toEqual([
          path,
          401,
          'invalid_api_key',
        ]);
        for (const scope of ['full_access', 'assistant', 'user'] as const) {
          const res = await admin(method, path, acme.keys[scope], body);
          expect([path, scope, res.status, res.body]).toEqual([
            path,
            scope,
            403,
            {
              error: {
                type: 'authentication_error',
                code: 'insufficient_scope',
                message: 'This API key needs scope "admin"',
              },
            },
          ]);
        }
      }
      expect(await auditCount()).toBe(before);
    });

    it('refuses tokens outside the admin group (403) and tokens the provider did not sign (401)', async () => {
      const { privateKey } = await generateKeyPair('RS256');
      const forged = await idp.mint(
        { sub: 'mallory', groups: [ADMIN_GROUP], aud: ADMIN_AUDIENCE },
        { key: privateKey },
      );
      const before = await auditCount();
      for (const [method, path, body] of endpoints('acme')) {
        const outsider = await admin(method, path, outsiderToken, body);
        expect([path, outsider.status, outsider.body.error]).toEqual([
          path,
          403,
          {
            type: 'authentication_error',
            code: 'insufficient_scope',
            message: "The token's groups do not include the administrators' group",
          },
        ]);
        const bad = await admin(method, path, forged, body);
        expect([path, bad.status, bad.body.error?.code]).toEqual([path, 401, 'invalid_token']);
      }
      expect(await auditCount()).toBe(before);
    });

    it("answers 404 for another organization's resources with an organization admin key", async () => {
      const before = await auditCount();
      const globexKeys = await admin('GET', `/organizations/${globex.slug}/keys`, platformToken);
      const globexKeyId = globexKeys.body.data[0].id;
      const foreign = [
        ...endpoints('globex').filter(([, path]) => path.startsWith('/organizations/globex')),
        ['POST', `/organizations/acme/keys/${globexKeyId}/revoke`] as [string, string],
        ['GET', `/organizations/acme/assistants/${globex.assistantId}`] as [string, string],
        ['GET', `/organizations/acme/assistants/asst_${globex.assistantId}/specialists`] as [string, string],
      ];
      for (const [method, path, body] of foreign) {
        const res = await admin(method, path, acme.keys.admin, body);
        // Writing another organization's row is creating or changing an organization: the platform's.
        const expected =
          method === 'PUT' && path === '/organizations/globex'
            ? [403, 'authentication_error']
            : [404, 'not_found_error'];
        expect([path, res.status, res.body.error?.type]).toEqual([path, ...expected]);
      }
      const applied = await admin('POST', '/apply', acme.keys.admin, applyDocument('globex'));
      expect([applied.status, applied.body.error.code]).toEqual([404, 'not_found']);
      // Nothing of globex changed, and the key still works.
      expect(await auditCount()).toBe(before);
      const stillActive = await admin('GET', `/organizations/globex/keys`, platformToken);
      expect(stillActive.body.data[0].revokedAt).toBeNull();
      const orgs = await admin('GET', '/organizations', acme.keys.admin);
      expect(orgs.body.data.map((o: any) => o.slug)).toEqual(['acme']);
    });

    it('keeps rate limits to platform administrators', async () => {
      const put = await admin('PUT', '/organizations/acme', acme.keys.admin, { rateLimitPerMinute: 100000 });
      expect([put.status, put.body.error.code]).toEqual([403, 'insufficient_scope']);
      const doc = { organizations: [{ slug: 'acme', rateLimitPerMinute: 100000 }] };
      const applied = await admin('POST', '/apply', acme.keys.admin, doc);
      expect([applied.status, applied.body.error.code]).toEqual([403, 'insufficient_scope']);
    });

    it('sets the embeddings endpoint by apply only: PUT refuses it to the platform as well', async () => {
      const before = await auditCount();
      for (const embeddings of [{ baseUrl: 'https://embed.example/v1', model: 'm' }, null]) {
        const put = await admin('PUT', '/organizations/acme', platformToken, { embeddings });
        expect([put.status, put.body.error.code]).toEqual([400, 'invalid_request']);
        expect(put.body.error.message).toContain('embeddings is set with apply');
      }
      expect(await auditCount()).toBe(before);
    });
  });

  describe('as an organization admin key', () => {
    it('manages its organization end to end, each change audited with the key and the request id', async () => {
      const key = acme.keys.admin;
      const [{ id: keyId }] = await app.dataSource.query<{ id: string }[]>(
        "SELECT id FROM api_keys WHERE organization_id = $1 AND 'admin' = ANY(scopes)",
        [acme.id],
      );

      const org = await admin('PUT', '/organizations/acme', key, { name: 'Acme Corporation' });
      expect(org.status).toBe(200);
      expect(org.body).toMatchObject({
        id: acme.id,
        slug: 'acme',
        name: 'Acme Corporation',
        action: 'updated',
      });
      const requestId = org.headers.get('x-request-id');
      expect(await auditRows(acme.id)).toEqual([
        // The platform's grant in beforeAll, made with the CLI, is audited too.
        expect.objectContaining({
          actor_type: 'cli',
          action: 'updated',
          resource_type: 'organization',
          after: expect.objectContaining({ secret_env_grants: ['ORDERS_TENANT'] }),
        }),
        {
          actor_type: 'api_key',
          actor_id: keyId,
          actor_issuer: null,
          action: 'updated',
          resource_type: 'organization',
          organization_id: acme.id,
          before: expect.objectContaining({ name: 'acme' }),
          after: expect.objectContaining({ name: 'Acme Corporation' }),
          request_id: requestId,
        },
      ]);

      const tool = await admin('PUT', '/organizations/acme/tools/orders', key, ORDERS_TOOL);
      expect([tool.status, tool.body.action, tool.body.kind]).toEqual([200, 'created', 'rest']);
      const [toolAudit] = await auditRows(tool.body.id);
      expect(toolAudit).toMatchObject({ action: 'created', resource_type: 'tool', before: null });
      expect(toolAudit.after.config.headers).toEqual({
        'x-orders-token': '[redacted]',
        'x-tenant': { fromEnv: 'ORDERS_TENANT' },
      });
      expect(JSON.stringify(await auditRows(tool.body.id))).not.toContain('literal-secret-value');

      const assistant = await admin('PUT', '/organizations/acme/assistants/Support', key, {
        instructions: 'Help.',
        tools: ['orders'],
      });
      expect(assistant.body).toMatchObject({ name: 'Support', tools: ['orders'], action: 'created' });
      const again = await admin('PUT', '/organizations/acme/assistants/Support', key, {
        instructions: 'Help.',
      });
      expect(again.body.action).toBe('unchanged');
      const changed = await admin('PUT', '/organizations/acme/assistants/Support', key, {
        instructions: 'Help more.',
      });
      expect(changed.body.action).toBe('updated');
      expect(
        (await auditRows(assistant.body.id)).map((row) => [row.action, row.before?.instructions ?? null]),
      ).toEqual([
        ['created', null],
        ['updated', 'Help.'],
      ]);
      const listed = await admin('GET', '/organizations/acme/assistants', key);
      expect(listed.body.data.map((a: any) => a.name).sort()).toEqual(['Support', 'acme assistant']);
      const shown = await admin('GET', `/organizations/acme/assistants/asst_${assistant.body.id}`, key);
      expect(shown.body).toMatchObject({ id: assistant.body.id, instructions: 'Help more.' });

      const specialist = await admin(
        'PUT',
        '/organizations/acme/assistants/Support/specialists/billing',
        key,
        {
          role: 'Invoices',
          tools: ['orders'],
        },
      );
      expect(specialist.body).toMatchObject({
        name: 'billing',
        role: 'Invoices',
        model: null,
        action: 'created',
      });
      const specialists = await admin('GET', '/organizations/acme/assistants/Support/specialists', key);
      expect(specialists.body.data.map((s: any) => s.name)).toEqual(['billing']);
      expect((await auditRows(specialist.body.id))[0]).toMatchObject({ resource_type: 'specialist' });

      const gateway = await admin('PUT', '/organizations/acme/gateways/acme-ide', key, { tools: ['orders'] });
      expect(gateway.body).toMatchObject({ name: 'acme-ide', tools: ['orders'], action: 'created' });
      const gateways = await admin('GET', '/organizations/acme/gateways', key);
      expect(gateways.body.data.map((g: any) => g.name)).toEqual(['acme-ide']);
      const tools = await admin('GET', '/organizations/acme/tools', key);
      expect(tools.body.data.map((t: any) => t.name)).toEqual(['orders']);
      expect((await auditRows(gateway.body.id))[0]).toMatchObject({ resource_type: 'gateway' });

      // A key: the secret once, never again; revoking it shuts it out.
      const created = await admin('POST', '/organizations/acme/keys', key, {
        name: 'portal',
        scopes: ['assistant'],
      });
      expect(created.status).toBe(201);
      expect(created.body.secret).toMatch(/^swb_[0-9A-Za-z]{43}$/);
      const keys = await admin('GET', '/organizations/acme/keys', key);
      const listedKey = keys.body.data.find((k: any) => k.id === created.body.id);
      expect(listedKey).toMatchObject({ name: 'portal', scopes: ['assistant'], revokedAt: null });
      expect(JSON.stringify(keys.body)).not.toContain(created.body.secret);
      expect(keys.body.data.every((k: any) => !('secret' in k) && !('keyHash' in k))).toBe(true);
      const keyAudit = JSON.stringify(await auditRows(created.body.id));
      expect(keyAudit).not.toContain(created.body.secret);
      expect(keyAudit).not.toMatch(/[0-9a-f]{64}/);

      const revoked = await admin('POST', `/organizations/acme/keys/${created.body.id}/revoke`, key);
      expect(revoked.status).toBe(200);
      expect(revoked.body.revokedAt).toEqual(expect.any(String));
      const twice = await admin('POST', `/organizations/acme/keys/${created.body.id}/revoke`, key);
      expect([twice.status, twice.body.error.code]).toEqual([404, 'not_found']);
      const refused = await call(
        app.baseUrl,
        'GET',
        '/v1/responses/resp_00000000-0000-4000-8000-000000000000',
        {
          key: created.body.secret,
        },
      );
      expect([refused.status, refused.body.error.code]).toEqual([401, 'invalid_api_key']);
      expect((await auditRows(created.body.id)).map((row) => row.action)).toEqual(['created', 'revoked']);

      // The audit log through the API: this organization's rows only, newest first.
      const log = await admin('GET', '/audit-log?limit=100', key);
      expect(log.status).toBe(200);
      expect(log.body.data.every((row: any) => row.organizationId === acme.id)).toBe(true);
      // Changes made with this key: the platform's CLI grant (beforeAll) is in the log too.
      const changes = log.body.data.filter(
        (row: any) => row.action !== 'denied' && row.actor.type === 'api_key',
      );
      expect(changes).toHaveLength(8);
      expect(changes[0]).toMatchObject({
        action: 'revoked',
        resourceType: 'api_key',
        resourceId: created.body.id,
        actor: { type: 'api_key', id: keyId, issuer: null },
        requestId: revoked.headers.get('x-request-id'),
      });
    });

    it('refuses bad input with 400 in the envelope and writes nothing', async () => {
      const before = await auditCount();
      const noKind = await admin('PUT', '/organizations/acme/tools/broken', acme.keys.admin, { config: {} });
      expect([noKind.status, noKind.body.error.code, noKind.body.error.type]).toEqual([
        400,
        'invalid_request',
        'invalid_request_error',
      ]);
      const badModel = await admin('PUT', '/organizations/acme/assistants/Broken', acme.keys.admin, {
        model: { provider: 'nope' },
      });
      expect([badModel.status, badModel.body.error.code]).toEqual([400, 'invalid_request']);
      expect(badModel.body.error.message).toMatch(/provider/);
      const badScope = await admin('POST', '/organizations/acme/keys', acme.keys.admin, {
        name: 'x',
        scopes: ['root'],
      });
      expect([badScope.status, badScope.body.error.code]).toEqual([400, 'invalid_request']);
      const badDoc = await admin('POST', '/apply', acme.keys.admin, {
        organizations: [{ slug: 'acme', rateLimit: 5 }],
      });
      expect([badDoc.status, badDoc.body.error.code]).toEqual([400, 'invalid_request']);
      expect(badDoc.body.error.message).toMatch(/rateLimit/);
      const badCursor = await admin('GET', '/audit-log?after=nonsense', acme.keys.admin);
      expect([badCursor.status, badCursor.body.error.code]).toEqual([400, 'invalid_request']);
      expect(
        await app.dataSource.query(
          "SELECT 1 FROM assistants WHERE name = 'Broken' AND organization_id = $1",
          [acme.id],
        ),
      ).toEqual([]);
      expect(await auditCount()).toBe(before);
    });
  });

  describe('as a platform administrator', () => {
    it('manages every organization, audited with the token subject and issuer', async () => {
      const orgs = await admin('GET', '/organizations', platformToken);
      expect(orgs.status).toBe(200);
      expect(orgs.body.data.map((o: any) => o.slug)).toEqual(expect.arrayContaining(['acme', 'globex']));

      const created = await admin('PUT', '/organizations/initech', platformToken, { rateLimitPerMinute: 60 });
      expect(created.body).toMatchObject({
        slug: 'initech',
        name: 'initech',
        rateLimitPerMinute: 60,
        action: 'created',
      });
      expect(await auditRows(created.body.id)).toEqual([
        expect.objectContaining({
          actor_type: 'oidc',
          actor_id: 'alice',
          actor_issuer: idp.issuer,
          action: 'created',
          before: null,
          organization_id: created.body.id,
        }),
      ]);

      const assistant = await admin('PUT', '/organizations/globex/assistants/Helpdesk', platformToken, {
        instructions: 'Globex help.',
      });
      expect(assistant.body).toMatchObject({ organizationId: globex.id, action: 'created' });
      const key = await admin('POST', `/organizations/${globex.id}/keys`, platformToken, {
        name: 'ops',
        scopes: ['admin'],
      });
      expect(key.status).toBe(201);
      // The new admin key manages globex, and only globex.
      const own = await admin('GET', '/organizations/globex/assistants/Helpdesk', key.body.secret);
      expect(own.body.id).toBe(assistant.body.id);
      const other = await admin('GET', '/organizations/acme/assistants', key.body.secret);
      expect(other.status).toBe(404);
    });

    it('reads the whole audit log, filtered by organization on request, page by page', async () => {
      const all: any[] = [];
      let cursor: string | null = null;
      do {
        const page: ApiReply = await admin(
          'GET',
          `/audit-log?limit=2${cursor ? `&after=${cursor}` : ''}`,
          platformToken,
        );
        expect(page.status).toBe(200);
        expect(page.body.data.length).toBeLessThanOrEqual(2);
        all.push(...page.body.data);
        cursor = page.body.next_cursor;
      } while (cursor);
      const everyRow = await app.dataSource.query('SELECT count(*)::int AS n FROM audit_log');
      expect(all.length).toBe(everyRow[0].n);
      expect(new Set(all.map((row) => row.id)).size).toBe(all.length);
      const times = all.map((row) => Date.parse(row.createdAt));
      expect([...times].sort((a, b) => b - a)).toEqual(times);
      // Refusals of a platform administrator (`denied`) belong to no organization.
      const changes = all.filter((row) => row.action !== 'denied');
      expect(new Set(changes.map((row) => row.organizationId))).toEqual(
        new Set([
          acme.id,
          globex.id,
          changes.find((row) => row.resourceType === 'organization' && row.action === 'created').resourceId,
        ]),
      );
      const globexOnly = await admin('GET', '/audit-log?organization=globex', platformToken);
      expect(globexOnly.body.data.length).toBeGreaterThan(0);
      expect(globexOnly.body.data.every((row: any) => row.organizationId === globex.id)).toBe(true);
      // An organization key cannot widen its view.
      const acmeView = await admin('GET', '/audit-log?organization=globex', acme.keys.admin);
      expect(acmeView.status).toBe(200);
      expect(acmeView.body.data.length).toBeGreaterThan(0);
      expect(acmeView.body.data.every((row: any) => row.organizationId === acme.id)).toBe(true);
    });
  });

  describe('apply over HTTP', () => {
    /** Ids of items a dry run would create are not kept; compare everything else. */
    const comparable = (report: any) => ({
      dryRun: report.dryRun,
      summary: report.summary,
      changes: report.changes.map((c: any) => ({
        ...c,
        id: c.action === 'created' && report.dryRun ? '*' : c.id,
      })),
    });

    it('reports exactly as the CLI, dry run included, and audits what it changed', async () => {
      const document = applyDocument('acme');
      const file = join(workDir, 'acme.json');
      await writeFile(file, JSON.stringify(document));
      const before = await auditCount();

      const httpDry = await admin('POST', '/apply?dry_run=true', acme.keys.admin, document);
      expect(httpDry.status).toBe(200);
      const cliDry = await cli('apply', '-f', file, '--dry-run');
      expect(comparable(httpDry.body)).toEqual(comparable(cliDry));
      expect(httpDry.body.summary).toEqual({ created: 4, updated: 1, unchanged: 0 });
      expect(await auditCount()).toBe(before);

      const applied = await admin('POST', '/apply', acme.keys.admin, document);
      expect(applied.status).toBe(200);
      expect(applied.body.summary).toEqual({ created: 4, updated: 1, unchanged: 0 });
      const rows = await app.dataSource.query(
        'SELECT resource_type, resource_id, action, organization_id, actor_type FROM audit_log WHERE request_id = $1 ORDER BY resource_type',
        [applied.headers.get('x-request-id')],
      );
      expect(rows).toHaveLength(5);
      expect(rows.every((row: any) => row.organization_id === acme.id && row.actor_type === 'api_key')).toBe(
        true,
      );
      expect(rows.map((row: any) => row.resource_type)).toEqual([
        'assistant',
        'gateway',
        'organization',
        'specialist',
        'tool',
      ]);
      expect(new Set(rows.map((row: any) => row.resource_id))).toEqual(
        new Set(applied.body.changes.map((change: any) => change.id)),
      );

      // Now everything matches: the CLI and the API report the same unchanged items, same ids.
      const cliAgain = await cli('apply', '-f', file);
      const httpAgain = await admin('POST', '/apply', platformToken, document);
      expect(httpAgain.body).toEqual({ dryRun: false, changes: cliAgain.changes, summary: cliAgain.summary });
      expect(httpAgain.body.summary).toEqual({ created: 0, updated: 0, unchanged: 5 });
      expect(await auditCount()).toBe(before + 5);
    });
  });

  describe('apply with prune over HTTP', () => {
    it('deletes within the organization as the CLI would, audited; refuses declared keys', async () => {
      const kept = await admin('PUT', '/organizations/globex/gateways/globex-keep', platformToken, {
        tools: [],
      });
      expect(kept.status).toBe(200);
      const document = { organizations: [{ slug: 'acme', gateways: [] }] };
      const file = join(workDir, 'prune.json');
      await writeFile(file, JSON.stringify(document));
      const httpDry = await admin('POST', '/apply?dry_run=true&prune=true', acme.keys.admin, document);
      const cliDry = await cli('apply', '-f', file, '--dry-run', '--prune');
      expect(httpDry.status).toBe(200);
      expect(httpDry.body).toEqual({ dryRun: true, changes: cliDry.changes, summary: cliDry.summary });
      expect(httpDry.body.changes.map((c: any) => [c.key, c.action]).sort()).toEqual([
        ['acme', 'unchanged'],
        ['acme/acme-applied', 'deleted'],
        ['acme/acme-ide', 'deleted'],
      ]);

      const pruned = await admin('POST', '/apply?prune=true', acme.keys.admin, document);
      expect(pruned.body.summary).toMatchObject({ deleted: 2 });
      const rows = await app.dataSource.query(
        'SELECT resource_type, action, organization_id FROM audit_log WHERE request_id = $1',
        [pruned.headers.get('x-request-id')],
      );
      expect(rows).toEqual([
        { resource_type: 'gateway', action: 'deleted', organization_id: acme.id },
        { resource_type: 'gateway', action: 'deleted', organization_id: acme.id },
      ]);
      // globex's gateways are untouched.
      const globexGateways = await admin('GET', '/organizations/globex/gateways', platformToken);
      expect(globexGateways.body.data.map((g: any) => g.name)).toEqual(['globex-keep']);

      const keys = {
        organizations: [{ slug: 'acme', apiKeys: [{ name: 'x', scopes: ['user'], keyFromEnv: 'HOME' }] }],
      };
      const refused = await admin('POST', '/apply', platformToken, keys);
      expect([refused.status, refused.body.error.code]).toEqual([400, 'invalid_request']);
      expect(refused.body.error.message).toMatch(/^organizations\[0\]\.apiKeys: /);
    });
  });

  describe('every endpoint', () => {
    it('answers an admin key for its organization and a platform administrator for any', async () => {
      const callers: [string, string, string][] = [
        ['acme admin key', acme.keys.admin, 'acme'],
        ['platform administrator', platformToken, 'globex'],
      ];
      for (const [who, credential, slug] of callers) {
        const issued = await admin('POST', `/organizations/${slug}/keys`, credential, {
          name: 'to revoke',
          scopes: ['user'],
        });
        for (const [method, path, body] of endpoints(slug)) {
          const real = path.replace('00000000-0000-4000-8000-000000000000', issued.body.id);
          const res = await admin(method, real, credential, body);
          expect([who, method, real, res.status]).toEqual([
            who,
            method,
            real,
            method === 'POST' && real.endsWith('/keys') ? 201 : 200,
          ]);
        }
      }
    });
  });
});
