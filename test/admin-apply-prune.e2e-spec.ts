import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { runAdmin } from '../src/admin/admin.runner.js';
import { call } from './support/http.js';
import { startTestApp, type TestApp } from './support/test-app.js';

/**
 * `apply --prune` and API keys declared by reference, as a GitOps job runs them: the same
 * document applied again after items were removed from it, keys read from the environment.
 */
describe('apply --prune and declared API keys', () => {
  let app: TestApp;
  let workDir: string;
  const PORTAL_KEY = `swb_${'P'.repeat(43)}`;
  const OPS_KEY = `swb_${'O'.repeat(43)}`;

  async function apply(
    document: unknown,
    ...flags: string[]
  ): Promise<{ code: number; json: any; stderr: string }> {
    const file = join(workDir, `doc-${Math.random().toString(36).slice(2)}.yaml`);
    await writeFile(file, stringify(document));
    let stdout = '';
    let stderr = '';
    const code = await runAdmin(
      ['apply', '-f', file, '--json', ...flags],
      { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } },
      { ...app.database.env, INIT_CWD: workDir, ACME_PORTAL_KEY: PORTAL_KEY, ACME_OPS_KEY: OPS_KEY },
    );
    return { code, json: code === 0 ? JSON.parse(stdout) : undefined, stderr };
  }

  const changes = (report: any) =>
    report.changes
      .map((c: any) => `${c.kind} ${c.key}: ${c.action}`)
      .filter((c: string) => !c.endsWith('unchanged'));

  const names = async (table: string, slug: string) =>
    (
      await app.dataSource.query(
        `SELECT t.name FROM ${table} t JOIN organizations o ON o.id = t.organization_id WHERE o.slug = $1 ORDER BY t.name`,
        [slug],
      )
    ).map((row: { name: string }) => row.name);

  const full = {
    organizations: [
      {
        slug: 'prune-acme',
        apiKeys: [
          { name: 'portal', scopes: ['assistant'], keyFromEnv: 'ACME_PORTAL_KEY' },
          { name: 'ops', scopes: ['full_access'], keyFromEnv: 'ACME_OPS_KEY' },
        ],
        tools: [
          {
            name: 'lookup',
            kind: 'rest',
            config: {
              method: 'GET',
              urlTemplate: 'https://api.example.com/lookup',
              parameters: { type: 'object', properties: {} },
            },
          },
        ],
        assistants: [
          {
            name: 'Support',
            specialists: [
              { name: 'billing', role: 'Bills' },
              { name: 'returns', role: 'Returns' },
            ],
          },
          { name: 'Sales' },
        ],
        gateways: [{ name: 'prune-acme-ide', tools: ['lookup'] }],
      },
      { slug: 'prune-globex', assistants: [{ name: 'Helper' }] },
    ],
  };

  beforeAll(async () => {
    app = await startTestApp({ API_KEY_CACHE_TTL_SECONDS: '0' });
    workDir = await mkdtemp(join(tmpdir(), 'switchboard-prune-'));
  });
  afterAll(async () => {
    await app?.close();
    await rm(workDir, { recursive: true, force: true });
  });

  it('imports keys from the environment, storing only their hash, and they authenticate', async () => {
    const report = await apply(full);
    expect({ code: report.code, stderr: report.stderr }).toEqual({ code: 0, stderr: '' });
    expect(changes(report.json)).toEqual(
      expect.arrayContaining(['api key prune-acme/portal: created', 'api key prune-acme/ops: created']),
    );
    const stored = await app.dataSource.query(
      `SELECT k.name, k.key_hash, k.hint FROM api_keys k JOIN organizations o ON o.id = k.organization_id
        WHERE o.slug = 'prune-acme' ORDER BY k.name`,
    );
    expect(JSON.stringify(stored)).not.toContain(PORTAL_KEY);
    expect(stored.map((k: any) => k.hint)).toEqual(['swb_…OOOO', 'swb_…PPPP']);
    const reply = await call(app.baseUrl, 'GET', '/v1/memory', {
      key: PORTAL_KEY,
      headers: { 'x-user-id': 'u' },
    });
    expect(reply.status).toBe(403); // authenticated; the scope is `assistant` only
  });

  it('reports what --prune would delete with --dry-run, and deletes nothing', async () => {
    const trimmed = structuredClone(full);
    const acme = trimmed.organizations[0];
    acme.apiKeys = acme.apiKeys!.slice(0, 1);
    acme.assistants = [{ name: 'Support', specialists: [{ name: 'billing', role: 'Bills' }] }];
    acme.gateways = [];
    const report = await apply(trimmed, '--prune', '--dry-run');
    expect({ code: report.code, stderr: report.stderr }).toEqual({ code: 0, stderr: '' });
    expect(changes(report.json).sort()).toEqual([
      'api key prune-acme/ops: deleted',
      'assistant prune-acme/Sales: deleted',
      'gateway prune-acme/prune-acme-ide: deleted',
      'specialist prune-acme/Support/returns: deleted',
    ]);
    expect(report.json.summary.deleted).toBe(4);
    expect(await names('assistants', 'prune-acme')).toEqual(['Sales', 'Support']);
    expect(await names('mcp_gateways', 'prune-acme')).toEqual(['prune-acme-ide']);
  });

  it('deletes what the document no longer declares, within the organizations and lists it states', async () => {
    const trimmed = structuredClone(full);
    const acme = trimmed.organizations[0];
    acme.apiKeys = acme.apiKeys!.slice(0, 1);
    acme.assistants = [{ name: 'Support', specialists: [{ name: 'billing', role: 'Bills' }] }];
    acme.gateways = [];
    // globex is left out of the document entirely: prune never touches an organization it does not name.
    trimmed.organizations = [acme];
    const report = await apply(trimmed, '--prune');
    expect({ code: report.code, stderr: report.stderr }).toEqual({ code: 0, stderr: '' });
    expect(report.json.summary.deleted).toBe(4);
    expect(await names('assistants', 'prune-acme')).toEqual(['Support']);
    expect(await names('mcp_gateways', 'prune-acme')).toEqual([]);
    expect(await names('tools', 'prune-acme')).toEqual(['lookup']);
    expect(await names('assistants', 'prune-globex')).toEqual(['Helper']);
    const specialists = await app.dataSource.query(`SELECT name FROM specialists ORDER BY name`);
    expect(specialists.map((s: any) => s.name)).toEqual(['billing']);
    // The key dropped from the document is revoked (kept for the record), and refused at once.
    const ops = await call(app.baseUrl, 'GET', '/v1/memory', { key: OPS_KEY, headers: { 'x-user-id': 'u' } });
    expect(ops.status).toBe(401);
    const again = await apply(trimmed, '--prune');
    expect(changes(again.json)).toEqual([]);
  });

  it('without --prune, leaves undeclared items alone; an organization entry without a list keeps that kind', async () => {
    const report = await apply({ organizations: [{ slug: 'prune-acme', assistants: [] }] });
    expect({ code: report.code, stderr: report.stderr }).toEqual({ code: 0, stderr: '' });
    expect(await names('assistants', 'prune-acme')).toEqual(['Support']);
    const noList = await apply({ organizations: [{ slug: 'prune-acme' }] }, '--prune');
    expect(noList.json.summary.deleted).toBe(0);
    expect(await names('assistants', 'prune-acme')).toEqual(['Support']);
  });

  it('names the field when a declared key is missing from the environment, and changes nothing', async () => {
    const broken = {
      organizations: [
        { slug: 'prune-acme', apiKeys: [{ name: 'x', scopes: ['user'], keyFromEnv: 'NOT_SET_ANYWHERE' }] },
      ],
    };
    const report = await apply(broken, '--prune');
    expect(report.code).toBe(1);
    expect(report.stderr).toContain(
      'organizations[0].apiKeys[0].keyFromEnv: the environment variable NOT_SET_ANYWHERE is not set',
    );
    const portal = await call(app.baseUrl, 'POST', '/v1/responses', { key: PORTAL_KEY, body: {} });
    expect(portal.status).toBe(400); // still authenticated: the failed apply revoked nothing
  });
});
