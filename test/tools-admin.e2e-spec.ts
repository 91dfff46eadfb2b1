import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adminCli } from './support/admin-cli.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';
import { json, run, startLocalServer, toolsOf, type LocalServer } from './support/tools-local-servers.js';

describe('tools: declared with apply -f and managed with the admin CLI', () => {
  let app: TestApp;
  let api: LocalServer;
  let acme: SeededOrganization;
  let workDir: string;

  const { admin, ok } = adminCli(() => ({ ...app.database.env, INIT_CWD: workDir }));

  const catalogue = (port: number) => `
organizations:
  - slug: acme
    plugins:
      - name: Acme CRM
        oauth:
          providerId: acme-crm
          requiredScopes: [contacts.read, contacts.write]
          authUrl: https://id.acme.test/authorize
    tools:
      - name: search
        kind: web_search
        config: { provider: searxng, baseUrl: "http://127.0.0.1:${port}", maxResults: 3 }
      - name: contacts
        kind: rest
        description: Lists the user's CRM contacts
        plugin: Acme CRM
        config:
          method: GET
          urlTemplate: "http://127.0.0.1:${port}/contacts/{group}"
          auth: { type: user_oauth, providerId: acme-crm }
          parameters:
            type: object
            properties: { group: { type: string } }
            required: [group]
      - name: crm_mcp
        kind: mcp
        plugin: Acme CRM
        config: { url: "http://127.0.0.1:${port}/mcp", allowedTools: [find_contact], timeoutMs: 5000 }
`;

  beforeAll(async () => {
    api = await startLocalServer((request, res) =>
      json(res, 200, { path: request.url, auth: request.headers.authorization }),
    );
    app = await startTestApp({ SSRF_ALLOWLIST: '127.0.0.1' });
    acme = await app.seedOrganization('acme');
    await app.seedOrganization('globex');
    workDir = await mkdtemp(join(tmpdir(), 'switchboard-tools-admin-'));
  });
  afterAll(async () => {
    await app?.close();
    await api?.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it('creates plugins and tools, then reports them unchanged when applied again', async () => {
    await writeFile(join(workDir, 'tools.yaml'), catalogue(api.port));
    const first = await ok('apply', '-f', 'tools.yaml');
    const mine = (changes: { kind: string; key: string; action: string }[]) =>
      changes.filter((c) => c.kind === 'plugin' || c.kind === 'tool').map((c) => [c.kind, c.key, c.action]);
    expect(mine(first.changes)).toEqual([
      ['plugin', 'acme/Acme CRM', 'created'],
      ['tool', 'acme/search', 'created'],
      ['tool', 'acme/contacts', 'created'],
      ['tool', 'acme/crm_mcp', 'created'],
    ]);
    const second = await ok('apply', '-f', 'tools.yaml');
    expect(mine(second.changes).map(([, , action]) => action)).toEqual([
      'unchanged',
      'unchanged',
      'unchanged',
      'unchanged',
    ]);

    const rows = await app.dataSource.query(
      `SELECT t.name, t.kind, p.name AS plugin FROM tools t LEFT JOIN plugins p ON p.id = t.plugin_id
       WHERE t.organization_id = $1 ORDER BY t.name`,
      [acme.id],
    );
    expect(rows).toEqual([
      { name: 'contacts', kind: 'rest', plugin: 'Acme CRM' },
      { name: 'crm_mcp', kind: 'mcp', plugin: 'Acme CRM' },
      { name: 'search', kind: 'web_search', plugin: null },
    ]);
  });

  it('runs an applied tool with the user token and reports an edit as updated', async () => {
    const tools = toolsOf(app);
    const contacts = await tools.one(acme.id, 'contacts');
    expect(await run(contacts, acme.id, { group: 'vip' }, { userTokens: { 'acme-crm': 'tok-1' } })).toEqual({
      ok: true,
      // The server got the user's token and echoed it; the echo is redacted before anyone reads it.
      output: JSON.stringify({ path: '/contacts/vip', auth: 'Bearer [redacted]' }),
    });
    expect(api.requests.at(-1)?.headers.authorization).toBe('Bearer tok-1');
    await writeFile(
      join(workDir, 'edited.yaml'),
      catalogue(api.port).replace('maxResults: 3', 'maxResults: 4'),
    );
    const edited = await ok('apply', '-f', 'edited.yaml');
    expect(edited.changes.find((c: { key: string }) => c.key === 'acme/search')).toMatchObject({
      action: 'updated',
    });
  });

  it('rolls the whole file back when one tool is invalid, naming where', async () => {
    await writeFile(
      join(workDir, 'broken.yaml'),
      `organizations:
  - slug: acme
    tools:
      - name: fine_tool
        kind: rest
        config: { urlTemplate: "https://api.example.com/ok" }
      - name: broken_tool
        kind: rest
        config: { urlTemplate: "https://{host}/x", parameters: { type: object, properties: { host: { type: string } } } }
`,
    );
    const result = await admin('apply', '-f', 'broken.yaml');
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'error: organizations[0].tools[1]: config.urlTemplate may not have placeholders in its host\n',
    );
    const rows = await app.dataSource.query('SELECT name FROM tools WHERE name = $1', ['fine_tool']);
    expect(rows).toEqual([]);
  });

  it('lists, shows and deletes tools per organization', async () => {
    const listed = await ok('tools', 'list', '--org', 'acme');
    expect(listed.map((tool: { name: string; kind: string }) => [tool.name, tool.kind])).toEqual([
      ['contacts', 'rest'],
      ['crm_mcp', 'mcp'],
      ['search', 'web_search'],
    ]);
    expect(await ok('tools', 'list', '--org', 'globex')).toEqual([]);

    const shown = await ok('tools', 'show', 'contacts', '--org', 'acme');
    expect(shown).toMatchObject({
      name: 'contacts',
      kind: 'rest',
      description: "Lists the user's CRM contacts",
      plugin: { name: 'Acme CRM', oauth: { providerId: 'acme-crm' } },
      config: { method: 'GET', auth: { type: 'user_oauth', providerId: 'acme-crm' } },
    });

    const text = await admin('tools', 'list', '--org', 'acme');
    expect(text.stdout).toMatch(/^NAME\s+KIND\s+PLUGIN\s+TARGET\s+UPDATED\n/);

    const other = await admin('tools', 'delete', 'contacts', '--org', 'globex');
    expect(other).toMatchObject({ code: 1, stderr: 'error: organization globex has no tool "contacts"\n' });
    expect(await ok('tools', 'delete', 'contacts', '--org', 'acme')).toMatchObject({
      name: 'contacts',
      deleted: true,
    });
    expect(await toolsOf(app).catalog.resolve(acme.id, ['contacts'])).toEqual([]);
  });
});
