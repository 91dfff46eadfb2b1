import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';
import { json, run, startLocalServer, toolsOf, type LocalServer } from './support/tools-local-servers.js';

describe('tools: REST tools against a local HTTP API', () => {
  let app: TestApp;
  let api: LocalServer;
  let acme: SeededOrganization;
  let globex: SeededOrganization;
  let tools: ReturnType<typeof toolsOf>;
  let crmPluginId: string;

  beforeAll(async () => {
    api = await startLocalServer((request, res) => {
      const path = request.url.split('?')[0];
      if (path.startsWith('/items/'))
        return json(res, 200, { id: decodeURIComponent(path.slice(7)), ok: true });
      if (path === '/orders') return json(res, 201, { received: JSON.parse(request.body) as unknown });
      if (path === '/slow') return; // never answers
      if (path === '/big') return void res.writeHead(200).end('x'.repeat(1024 * 1024));
      if (path === '/fail') return void res.writeHead(500).end('database exploded: constraint orders_pk');
      if (path === '/crm/contacts') {
        return request.headers.authorization === 'Bearer good-token'
          ? json(res, 200, { contacts: ['Ada'] })
          : json(res, 401, { error: 'invalid_token' });
      }
      res.writeHead(404).end();
    });
    app = await startTestApp({
      SSRF_ALLOWLIST: `127.0.0.1:${api.port}`,
      ITEMS_API_KEY: 's3cret-items-key',
      TOOL_OUTPUT_MAX_BYTES: '4kb',
    });
    acme = await app.seedOrganization('acme');
    globex = await app.seedOrganization('globex');
    tools = toolsOf(app);

    const crm = await tools.plugin(acme.id, {
      name: 'Acme CRM',
      oauth: {
        providerId: 'acme-crm',
        requiredScopes: ['contacts.read'],
        authUrl: 'https://id.acme.test/authorize',
      },
    });
    crmPluginId = crm.id;
    await tools.tool(acme.id, {
      name: 'get_item',
      kind: 'rest',
      description: 'Reads an item',
      config: {
        method: 'GET',
        urlTemplate: `${api.origin}/items/{id}`,
        query: { q: '{q}', view: 'full' },
        headers: { 'x-api-key': { fromEnv: 'ITEMS_API_KEY' }, 'x-client': 'switchboard-test' },
        parameters: {
          type: 'object',
          properties: { id: { type: 'string' }, q: { type: 'string' } },
          required: ['id'],
        },
      },
    });
    await tools.tool(acme.id, {
      name: 'create_order',
      kind: 'rest',
      plugin: 'Acme CRM',
      config: {
        method: 'POST',
        urlTemplate: `${api.origin}/orders`,
        auth: { type: 'user_oauth', providerId: 'acme-crm' },
        parameters: {
          type: 'object',
          properties: { sku: { type: 'string' }, quantity: { type: 'integer' } },
          required: ['sku'],
        },
      },
    });
    await tools.tool(acme.id, {
      name: 'order_from_template',
      kind: 'rest',
      config: {
        method: 'PUT',
        urlTemplate: `${api.origin}/orders`,
        auth: { type: 'env', env: 'ITEMS_API_KEY', header: 'X-Token', prefix: 'Key ' },
        body: { template: { order: { sku: '{sku}', quantity: '{quantity}', note: 'sku {sku}' } } },
        parameters: {
          type: 'object',
          properties: { sku: { type: 'string' }, quantity: { type: 'integer' } },
        },
      },
    });
    await tools.tool(acme.id, {
      name: 'list_contacts',
      kind: 'rest',
      plugin: 'Acme CRM',
      config: {
        method: 'GET',
        urlTemplate: `${api.origin}/crm/contacts`,
        auth: { type: 'user_oauth', providerId: 'acme-crm' },
      },
    });
    for (const [name, path, extra] of [
      ['slow_call', '/slow', { timeoutMs: 300 }],
      ['big_download', '/big', { maxResponseBytes: 2048 }],
      ['big_output', '/big', {}],
      ['failing_call', '/fail', {}],
    ] as const) {
      await tools.tool(acme.id, {
        name,
        kind: 'rest',
        config: { method: 'GET', urlTemplate: `${api.origin}${path}`, ...extra },
      });
    }
    await tools.tool(acme.id, {
      name: 'unset_secret',
      kind: 'rest',
      config: {
        method: 'GET',
        urlTemplate: `${api.origin}/items/1`,
        auth: { type: 'env', env: 'NOT_SET_ANYWHERE' },
      },
    });
  });
  afterAll(async () => {
    await app?.close();
    await api?.close();
  });

  it('GETs the URL from its template with query mapping, literal and environment headers', async () => {
    const tool = await tools.one(acme.id, 'get_item');
    expect(tool.kind).toBe('rest');
    expect(tool.definition).toEqual({
      name: 'get_item',
      description: 'Reads an item',
      parameters: {
        type: 'object',
        properties: { id: { type: 'string' }, q: { type: 'string' } },
        required: ['id'],
      },
    });
    const result = await run(tool, acme.id, { id: 'a b/c', q: 'blue shoes' });
    expect(result).toEqual({ ok: true, output: JSON.stringify({ id: 'a b/c', ok: true }) });
    const received = api.requests.at(-1)!;
    expect(received.method).toBe('GET');
    expect(received.url).toBe('/items/a%20b%2Fc?q=blue+shoes&view=full');
    expect(received.headers['x-api-key']).toBe('s3cret-items-key');
    expect(received.headers['x-client']).toBe('switchboard-test');
    expect(received.headers.authorization).toBeUndefined();
  });

  it('leaves out a query parameter whose optional argument is absent', async () => {
    await run(await tools.one(acme.id, 'get_item'), acme.id, { id: '7' });
    expect(api.requests.at(-1)!.url).toBe('/items/7?view=full');
  });

  it("POSTs the arguments as JSON with the user's OAuth token for the provider", async () => {
    const tool = await tools.one(acme.id, 'create_order');
    const result = await run(
      tool,
      acme.id,
      { sku: 'B-42', quantity: 3 },
      {
        userTokens: { 'acme-crm': 'good-token', other: 'not-this-one' },
      },
    );
    expect(result).toEqual({ ok: true, output: JSON.stringify({ received: { sku: 'B-42', quantity: 3 } }) });
    const received = api.requests.at(-1)!;
    expect(received.method).toBe('POST');
    expect(received.url).toBe('/orders');
    expect(received.headers.authorization).toBe('Bearer good-token');
    expect(received.headers['content-type']).toBe('application/json');
    expect(JSON.parse(received.body)).toEqual({ sku: 'B-42', quantity: 3 });
  });

  it('fills a body template, keeping argument types, with an environment secret in its own header', async () => {
    const result = await run(await tools.one(acme.id, 'order_from_template'), acme.id, {
      sku: 'Z9',
      quantity: 2,
    });
    expect(result.ok).toBe(true);
    const received = api.requests.at(-1)!;
    expect(received.method).toBe('PUT');
    expect(received.headers['x-token']).toBe('Key s3cret-items-key');
    expect(JSON.parse(received.body)).toEqual({ order: { sku: 'Z9', quantity: 2, note: 'sku Z9' } });
  });

  it('asks for sign-in (oauth_required) when x-user-tokens has no token for the plugin, without calling the API', async () => {
    const before = api.requests.length;
    for (const userTokens of [undefined, { 'someone-else': 'token' }]) {
      const result = await run(
        await tools.one(acme.id, 'create_order'),
        acme.id,
        { sku: 'B-1' },
        { userTokens },
      );
      expect(result).toEqual({
        ok: false,
        error: 'Acme CRM is unavailable until the user signs in',
        oauthRequired: {
          pluginId: crmPluginId,
          pluginName: 'Acme CRM',
          providerId: 'acme-crm',
          requiredScopes: ['contacts.read'],
          authUrl: 'https://id.acme.test/authorize',
        },
      });
    }
    expect(api.requests.length).toBe(before);
  });

  it('asks for sign-in the same way when the provider answers 401 to the given token', async () => {
    const tool = await tools.one(acme.id, 'list_contacts');
    const refused = await run(tool, acme.id, {}, { userTokens: { 'acme-crm': 'expired-token' } });
    expect(refused).toMatchObject({
      ok: false,
      oauthRequired: { pluginId: crmPluginId, providerId: 'acme-crm' },
    });
    expect(api.requests.at(-1)!.headers.authorization).toBe('Bearer expired-token');
    const accepted = await run(tool, acme.id, {}, { userTokens: { 'acme-crm': 'good-token' } });
    expect(accepted).toEqual({ ok: true, output: JSON.stringify({ contacts: ['Ada'] }) });
  });

  it('turns a timeout into a result the model can read', async () => {
    const result = await run(await tools.one(acme.id, 'slow_call'), acme.id, {});
    expect(result).toEqual({ ok: false, error: 'The tool did not answer within 0.3 seconds' });
  });

  it('reads no more than maxResponseBytes and says the response was cut', async () => {
    const result = await run(await tools.one(acme.id, 'big_download'), acme.id, {});
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.output).toBe(`${'x'.repeat(2048)}\n[response truncated at 2048 bytes]`);
  });

  it('caps what reaches the model at TOOL_OUTPUT_MAX_BYTES', async () => {
    const result = await run(await tools.one(acme.id, 'big_output'), acme.id, {});
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.output.startsWith('x'.repeat(4096))).toBe(true);
    expect(result.output).toMatch(/\n\[output truncated: \d+ of \d+ bytes omitted\]$/);
    expect(Buffer.byteLength(result.output)).toBeLessThan(4096 + 100);
  });

  it('reports an HTTP 500 with its status and the start of the body', async () => {
    const result = await run(await tools.one(acme.id, 'failing_call'), acme.id, {});
    expect(result).toEqual({
      ok: false,
      error: 'The API answered HTTP 500: database exploded: constraint orders_pk',
    });
  });

  it('reports missing arguments and unset secrets without calling the API or naming the secret', async () => {
    const before = api.requests.length;
    expect(await run(await tools.one(acme.id, 'get_item'), acme.id, { q: 'x' })).toEqual({
      ok: false,
      error: 'Missing required argument "id"',
    });
    expect(await run(await tools.one(acme.id, 'unset_secret'), acme.id, {})).toEqual({
      ok: false,
      error: 'The tool is misconfigured: a secret it needs is not set',
    });
    expect(api.requests.length).toBe(before);
  });

  it("never resolves another organization's tools, even by the same name", async () => {
    expect(await tools.catalog.resolve(globex.id, ['get_item', 'create_order'])).toEqual([]);
    expect(await tools.catalog.resolveAll(globex.id)).toEqual([]);
    await tools.tool(globex.id, {
      name: 'get_item',
      kind: 'rest',
      config: { method: 'GET', urlTemplate: `${api.origin}/items/globex` },
    });
    const globexTool = await tools.one(globex.id, 'get_item');
    expect(globexTool.definition.parameters).toEqual({ type: 'object', properties: {} });
    const acmeTool = await tools.one(acme.id, 'get_item');
    expect(acmeTool.definition.description).toBe('Reads an item');
    const rows = await app.dataSource.query(
      'SELECT organization_id FROM tools WHERE name = $1 ORDER BY organization_id',
      ['get_item'],
    );
    expect(rows.map((row: { organization_id: string }) => row.organization_id).sort()).toEqual(
      [acme.id, globex.id].sort(),
    );
  });

  it('resolves names in the order asked, skipping unknown ones', async () => {
    const resolved = await tools.catalog.resolve(acme.id, [
      'failing_call',
      'nope',
      'get_item',
      'failing_call',
    ]);
    expect(resolved.map((tool) => tool.definition.name)).toEqual(['failing_call', 'get_item']);
  });

  it('refuses invalid declarations with a message naming the field', async () => {
    const declare = (config: unknown, extra: Record<string, unknown> = {}) =>
      tools.tool(acme.id, { name: 'bad_tool', kind: 'rest', config, ...extra });
    await expect(declare({ urlTemplate: 'https://{host}/x' })).rejects.toThrow(/placeholders in its host/);
    await expect(declare({ urlTemplate: 'https://api.test/{id}' })).rejects.toThrow(/\{id\} is not declared/);
    await expect(declare({ urlTemplate: 'ftp://api.test/' })).rejects.toThrow(/http or https/);
    await expect(
      declare({ urlTemplate: 'https://api.test/', auth: { type: 'user_oauth', providerId: 'github' } }),
    ).rejects.toThrow(/plugin whose oauth.providerId is "github"/);
    await expect(declare({ urlTemplate: 'https://api.test/', headers: { Host: 'x' } })).rejects.toThrow(
      /not a header/,
    );
    await expect(tools.tool(acme.id, { name: 'bad name', kind: 'rest', config: {} })).rejects.toThrow(
      /name must be/,
    );
    await expect(tools.tool(acme.id, { name: 'x', kind: 'ftp', config: {} })).rejects.toThrow(/kind must be/);
    expect(await tools.catalog.resolve(acme.id, ['bad_tool'])).toEqual([]);
  });
});
