import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { call } from './support/http.js';
import { adminCli } from './support/admin-cli.js';
import { startTestApp, type TestApp } from './support/test-app.js';

const ADMIN_ORIGIN = 'https://admin.example.test';

/** Gateways as the administrator manages them: CLI commands and `apply -f`, seen by the service. */
describe('MCP gateway administration', () => {
  let app: TestApp;
  let workDir: string;

  const { ok, fails } = adminCli(() => ({ ...app.database.env, ...gatewayEnv, INIT_CWD: workDir }));

  const gatewayEnv = {
    OIDC_ISSUER: 'https://sso.example.test/realms/switchboard',
    OIDC_CLIENT_ID: 'switchboard-backend',
    PUBLIC_ADMIN_ORIGIN: ADMIN_ORIGIN,
  };

  const rows = (sql: string, parameters: unknown[] = []): Promise<any[]> =>
    app.dataSource.query(sql, parameters);
  const metadataStatus = async (name: string) =>
    (await call(app.baseUrl, 'GET', `/.well-known/oauth-protected-resource/mcp-gateway/${name}`)).status;

  beforeAll(async () => {
    app = await startTestApp(gatewayEnv);
    workDir = await mkdtemp(join(tmpdir(), 'switchboard-gateways-'));
    await app.seedOrganization('acme');
    await app.seedOrganization('globex');
  });
  afterAll(async () => {
    await app?.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it('creates, lists, shows, updates and deletes gateways with the CLI', async () => {
    const created = await ok('gateways', 'create', '--org', 'acme', '--name', 'acme-ide', '--tools', 'a,b,a');
    expect(created).toEqual({
      id: expect.any(String),
      organizationId: expect.any(String),
      name: 'acme-ide',
      tools: ['a', 'b'],
      url: `${ADMIN_ORIGIN}/mcp-gateway/acme-ide`,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(await metadataStatus('acme-ide')).toBe(200);

    expect(await ok('gateways', 'list', '--org', 'acme')).toEqual([created]);
    expect(await ok('gateways', 'list', '--org', 'globex')).toEqual([]);
    expect(await ok('gateways', 'show', '--org', 'acme', 'acme-ide')).toEqual(created);

    const updated = await ok('gateways', 'update', '--org', 'acme', 'acme-ide', '--tools', '*');
    expect(updated).toMatchObject({ id: created.id, tools: ['*'] });
    expect(
      (await rows('SELECT tool_names FROM mcp_gateways WHERE id = $1', [created.id]))[0].tool_names,
    ).toEqual(['*']);

    // Another organization neither sees nor changes it.
    expect(await fails('gateways', 'show', '--org', 'globex', 'acme-ide')).toMatch(/has no gateway/);
    expect(await fails('gateways', 'delete', '--org', 'globex', 'acme-ide')).toMatch(/has no gateway/);
    expect(await fails('gateways', 'update', '--org', 'globex', 'acme-ide', '--tools', 'x')).toMatch(
      /has no gateway/,
    );
    expect(await ok('gateways', 'show', '--org', 'acme', 'acme-ide')).toMatchObject({ tools: ['*'] });

    expect(await ok('gateways', 'delete', '--org', 'acme', 'acme-ide')).toEqual({
      id: created.id,
      name: 'acme-ide',
      deleted: true,
    });
    expect(await rows('SELECT id FROM mcp_gateways WHERE id = $1', [created.id])).toEqual([]);
    expect(await metadataStatus('acme-ide')).toBe(404);
  });

  it('refuses bad names, bad tool lists and a name the organization already holds', async () => {
    expect(await fails('gateways', 'create', '--org', 'acme', '--name', 'Bad_Name')).toMatch(/lowercase/);
    expect(await fails('gateways', 'create', '--org', 'acme', '--name', 'ok', '--tools', '*,web')).toMatch(
      /alone/,
    );
    expect(await fails('gateways', 'create', '--org', 'acme', '--name', 'ok', '--tools', 'bad name')).toMatch(
      /tool name/,
    );
    // Names are per organization: globex's name is free for acme, and acme cannot take it twice.
    await ok('gateways', 'create', '--org', 'globex', '--name', 'shared-name');
    await ok('gateways', 'create', '--org', 'acme', '--name', 'shared-name');
    expect(await fails('gateways', 'create', '--org', 'acme', '--name', 'shared-name')).toMatch(
      /already has a gateway named "shared-name"/,
    );
    expect(await rows("SELECT count(*)::int AS n FROM mcp_gateways WHERE name = 'shared-name'")).toEqual([
      { n: 2 },
    ]);
    await ok('gateways', 'delete', '--org', 'acme', 'shared-name');
    expect(await rows("SELECT name FROM mcp_gateways WHERE name = 'ok'")).toEqual([]);
  });

  it('applies a gateways section idempotently, and all-or-nothing', async () => {
    const file = join(workDir, 'gateways.yaml');
    await writeFile(
      file,
      [
        'organizations:',
        '  - slug: acme',
        '    gateways:',
        '      - name: acme-tools',
        '        tools: [order_status, web_search]',
        '      - name: acme-all',
        "        tools: ['*']",
      ].join('\n'),
    );
    const first = await ok('apply', '-f', 'gateways.yaml');
    expect(first.changes.filter((c: { kind: string }) => c.kind === 'gateway')).toEqual([
      { kind: 'gateway', key: 'acme/acme-tools', id: expect.any(String), action: 'created' },
      { kind: 'gateway', key: 'acme/acme-all', id: expect.any(String), action: 'created' },
    ]);
    const second = await ok('apply', '-f', 'gateways.yaml');
    expect(
      second.changes.filter((c: { kind: string }) => c.kind === 'gateway').map((c: any) => c.action),
    ).toEqual(['unchanged', 'unchanged']);
    expect(await rows("SELECT name FROM mcp_gateways WHERE name LIKE 'acme-%' ORDER BY name")).toEqual([
      { name: 'acme-all' },
      { name: 'acme-tools' },
    ]);

    // Changing the tools updates; an invalid gateway aborts the whole file.
    await writeFile(
      file,
      [
        'organizations:',
        '  - slug: acme',
        '    gateways:',
        '      - name: acme-tools',
        '        tools: [order_status]',
        '      - name: Bad_Name',
        '        tools: []',
      ].join('\n'),
    );
    expect(await fails('apply', '-f', 'gateways.yaml')).toMatch(/lowercase/);
    expect(
      (await rows("SELECT tool_names FROM mcp_gateways WHERE name = 'acme-tools'"))[0].tool_names,
    ).toEqual(['order_status', 'web_search']);

    await writeFile(
      file,
      [
        'organizations:',
        '  - slug: acme',
        '    gateways:',
        '      - name: acme-tools',
        '        tools: [order_status]',
      ].join('\n'),
    );
    const third = await ok('apply', '-f', 'gateways.yaml');
    expect(third.changes.filter((c: { kind: string }) => c.kind === 'gateway')).toEqual([
      {
        kind: 'gateway',
        key: 'acme/acme-tools',
        id: first.changes.find((c: any) => c.key === 'acme/acme-tools').id,
        action: 'updated',
      },
    ]);

    await writeFile(
      file,
      [
        'organizations:',
        '  - slug: acme',
        '    gateways:',
        '      - name: acme-tools',
        '        tool: [x]',
      ].join('\n'),
    );
    expect(await fails('apply', '-f', 'gateways.yaml')).toMatch(/unknown key.*tool/);
  });
});
