import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';
import { run, startLocalServer, toolsOf, type LocalServer } from './support/tools-local-servers.js';

/**
 * Without an allow-list entry, server tools reach only public addresses. The app allow-lists
 * one local server by host:port (the "redirector"); the "target" server stands for something
 * internal that must never receive a request.
 */
describe('tools: SSRF guard on every outbound request', () => {
  let app: TestApp;
  let target: LocalServer;
  let redirector: LocalServer;
  let acme: SeededOrganization;
  let tools: ReturnType<typeof toolsOf>;

  async function restTo(url: string) {
    const name = `probe_${Math.random().toString(36).slice(2, 10)}`;
    await tools.tool(acme.id, { name, kind: 'rest', config: { method: 'GET', urlTemplate: url } });
    return run(await tools.one(acme.id, name), acme.id, {});
  }

  beforeAll(async () => {
    target = await startLocalServer((_request, res) => void res.writeHead(200).end('internal secret'));
    redirector = await startLocalServer((request, res) => {
      if (request.url === '/hello') return void res.writeHead(200).end('hello from an allowed host');
      if (request.url === '/to-internal') {
        return void res.writeHead(302, { location: `http://127.0.0.1:${target.port}/stolen` }).end();
      }
      if (request.url === '/to-metadata') {
        return void res.writeHead(307, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
      }
      res.writeHead(404).end();
    });
    app = await startTestApp({ SSRF_ALLOWLIST: `127.0.0.1:${redirector.port}` });
    acme = await app.seedOrganization('acme');
    tools = toolsOf(app);
  });
  afterAll(async () => {
    await app?.close();
    await Promise.all([target, redirector].map((server) => server?.close()));
  });

  afterEach(() => {
    expect(target.requests).toEqual([]);
  });

  it('reaches an allow-listed host:port', async () => {
    expect(await restTo(`http://127.0.0.1:${redirector.port}/hello`)).toEqual({
      ok: true,
      output: 'hello from an allowed host',
    });
  });

  it.each([
    [
      'loopback 127.0.0.1',
      () => `http://127.0.0.1:${target.port}/`,
      'Refused to connect to 127.0.0.1: a loopback address',
    ],
    [
      'the metadata address',
      () => 'http://169.254.169.254/latest/meta-data/',
      'Refused to connect to 169.254.169.254: a link-local (cloud metadata) address',
    ],
    ['a private address', () => 'http://10.0.0.1/admin', 'Refused to connect to 10.0.0.1: a private address'],
    [
      'loopback written as a decimal number',
      () => `http://2130706433:${target.port}/`,
      'Refused to connect to 127.0.0.1: a loopback address',
    ],
    ['IPv6 loopback', () => `http://[::1]:${target.port}/`, 'Refused to connect to ::1: a loopback address'],
    [
      'IPv4-mapped IPv6 loopback',
      () => `http://[::ffff:127.0.0.1]:${target.port}/`,
      'Refused to connect to ::ffff:7f00:1: a loopback address',
    ],
    [
      'a host name resolving to loopback',
      () => `http://localhost:${target.port}/`,
      'Refused to connect to localhost (',
    ],
  ])('refuses %s', async (_what, url, message) => {
    const result = await restTo(url());
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toContain(message);
  });

  it('refuses a redirect from an allowed server to loopback, and to the metadata address', async () => {
    const before = redirector.requests.length;
    expect(await restTo(`http://127.0.0.1:${redirector.port}/to-internal`)).toEqual({
      ok: false,
      error: 'Refused to connect to 127.0.0.1: a loopback address that tools may not reach',
    });
    expect(await restTo(`http://127.0.0.1:${redirector.port}/to-metadata`)).toEqual({
      ok: false,
      error:
        'Refused to connect to 169.254.169.254: a link-local (cloud metadata) address that tools may not reach',
    });
    expect(redirector.requests.slice(before).map((request) => request.url)).toEqual([
      '/to-internal',
      '/to-metadata',
    ]);
  });

  it('guards web search and MCP servers the same way', async () => {
    await tools.tool(acme.id, {
      name: 'internal_search',
      kind: 'web_search',
      config: { provider: 'searxng', baseUrl: `http://127.0.0.1:${target.port}` },
    });
    expect(await run(await tools.one(acme.id, 'internal_search'), acme.id, { query: 'x' })).toEqual({
      ok: false,
      error: 'Refused to connect to 127.0.0.1: a loopback address that tools may not reach',
    });

    await tools.tool(acme.id, {
      name: 'internal_mcp',
      kind: 'mcp',
      config: { url: `http://localhost:${target.port}/mcp` },
    });
    const [placeholder] = await tools.catalog.resolve(acme.id, ['internal_mcp']);
    expect(placeholder.definition.name).toBe('internal_mcp');
    const result = await run(placeholder, acme.id, {});
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatch(/^Refused to connect to localhost \(.+\): a loopback address/);
  });
});
