import { call } from './support/http.js';
import { expectValidResponse } from './support/open-responses.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';
import { json, run, startLocalServer, toolsOf, type LocalServer } from './support/tools-local-servers.js';

describe('tools: web search against local SearXNG and Brave Search servers', () => {
  let app: TestApp;
  let searxng: LocalServer;
  let brave: LocalServer;
  let acme: SeededOrganization;
  let tools: ReturnType<typeof toolsOf>;

  beforeAll(async () => {
    // SearXNG's JSON API: GET /search?q=…&format=json → {query, number_of_results, results:[…]}.
    searxng = await startLocalServer((request, res) => {
      const url = new URL(request.url, 'http://localhost');
      if (url.pathname === '/locked/search') return json(res, 403, {});
      if (!url.pathname.endsWith('/search') || url.searchParams.get('format') !== 'json') {
        return void res.writeHead(400).end();
      }
      json(res, 200, {
        query: url.searchParams.get('q'),
        number_of_results: 3,
        results: [
          {
            title: 'Switchboard docs',
            url: 'https://docs.example/a',
            content: 'How <b>tools</b> work',
            engine: 'x',
          },
          { title: 'Second', url: 'https://example.org/b', content: 'Another page' },
          { title: 'Third', url: 'https://example.net/c', content: 'Yet another' },
        ],
        answers: [],
        suggestions: [],
      });
    });
    // Brave Search API: GET /res/v1/web/search?q=…&count=… with X-Subscription-Token.
    brave = await startLocalServer((request, res) => {
      const url = new URL(request.url, 'http://localhost');
      if (request.headers['x-subscription-token'] !== 'brave-test-key')
        return json(res, 401, { type: 'ErrorResponse' });
      if (url.pathname !== '/res/v1/web/search') return void res.writeHead(404).end();
      json(res, 200, {
        type: 'search',
        query: { original: url.searchParams.get('q') },
        web: {
          type: 'search',
          results: [
            {
              title: 'Brave &amp; friends',
              url: 'https://brave.example/1',
              description: 'The <strong>answer</strong> is here',
            },
            { title: 'Two', url: 'https://brave.example/2', description: 'More' },
          ],
        },
      });
    });
    app = await startTestApp({ SSRF_ALLOWLIST: '127.0.0.1', BRAVE_TEST_KEY: 'brave-test-key' });
    acme = await app.seedOrganization('acme');
    tools = toolsOf(app);
    await tools.tool(acme.id, {
      name: 'web_search',
      kind: 'web_search',
      config: { provider: 'searxng', baseUrl: searxng.origin, maxResults: 2, language: 'en' },
    });
    await tools.tool(acme.id, {
      name: 'searx_under_path',
      kind: 'web_search',
      config: { provider: 'searxng', baseUrl: `${searxng.origin}/searx` },
    });
    await tools.tool(acme.id, {
      name: 'searx_locked',
      kind: 'web_search',
      config: { provider: 'searxng', baseUrl: `${searxng.origin}/locked` },
    });
    await tools.tool(acme.id, {
      name: 'brave_search',
      kind: 'web_search',
      description: 'Search the web with Brave',
      config: { provider: 'brave', baseUrl: brave.origin, apiKeyEnv: 'BRAVE_TEST_KEY', maxResults: 5 },
    });
    await tools.tool(acme.id, {
      name: 'brave_no_key',
      kind: 'web_search',
      config: { provider: 'brave', baseUrl: brave.origin, apiKeyEnv: 'BRAVE_KEY_NOT_SET' },
    });
  });
  afterAll(async () => {
    await app?.close();
    await Promise.all([searxng, brave].map((server) => server?.close()));
  });

  it('searches SearXNG and hands the model titles, URLs and snippets, up to maxResults', async () => {
    const tool = await tools.one(acme.id, 'web_search');
    expect(tool.kind).toBe('web_search');
    expect(tool.definition.parameters).toEqual({
      type: 'object',
      properties: { query: { type: 'string', description: 'What to search for' } },
      required: ['query'],
    });
    const result = await run(tool, acme.id, { query: '  switchboard tools ' });
    expect(result).toEqual({
      ok: true,
      output: JSON.stringify({
        query: 'switchboard tools',
        results: [
          { title: 'Switchboard docs', url: 'https://docs.example/a', snippet: 'How tools work' },
          { title: 'Second', url: 'https://example.org/b', snippet: 'Another page' },
        ],
      }),
      webSearch: {
        query: 'switchboard tools',
        results: [
          { title: 'Switchboard docs', url: 'https://docs.example/a', snippet: 'How tools work' },
          { title: 'Second', url: 'https://example.org/b', snippet: 'Another page' },
        ],
      },
    });
    const received = new URL(searxng.requests.at(-1)!.url, 'http://localhost');
    expect(received.pathname).toBe('/search');
    expect(Object.fromEntries(received.searchParams)).toEqual({
      q: 'switchboard tools',
      format: 'json',
      language: 'en',
    });
  });

  it('keeps the path of a SearXNG instance served below a prefix', async () => {
    const result = await run(await tools.one(acme.id, 'searx_under_path'), acme.id, { query: 'x' });
    expect(result).toMatchObject({ ok: true, webSearch: { query: 'x' } });
    expect(result.ok && result.webSearch?.results).toHaveLength(3);
    expect(searxng.requests.at(-1)!.url.startsWith('/searx/search?')).toBe(true);
  });

  it('explains a SearXNG instance without JSON output enabled', async () => {
    expect(await run(await tools.one(acme.id, 'searx_locked'), acme.id, { query: 'x' })).toEqual({
      ok: false,
      error: 'The search engine refused JSON output (HTTP 403); its json format is not enabled',
    });
  });

  it("searches Brave with the subscription token from the environment, as Brave's API documents", async () => {
    const tool = await tools.one(acme.id, 'brave_search');
    expect(tool.definition.description).toBe('Search the web with Brave');
    const result = await run(tool, acme.id, { query: 'brave api' });
    expect(result).toEqual({
      ok: true,
      output: JSON.stringify({
        query: 'brave api',
        results: [
          { title: 'Brave & friends', url: 'https://brave.example/1', snippet: 'The answer is here' },
          { title: 'Two', url: 'https://brave.example/2', snippet: 'More' },
        ],
      }),
      webSearch: {
        query: 'brave api',
        results: [
          { title: 'Brave & friends', url: 'https://brave.example/1', snippet: 'The answer is here' },
          { title: 'Two', url: 'https://brave.example/2', snippet: 'More' },
        ],
      },
    });
    const received = brave.requests.at(-1)!;
    expect(received.method).toBe('GET');
    expect(received.headers['x-subscription-token']).toBe('brave-test-key');
    expect(received.headers.accept).toBe('application/json');
    expect(received.url).toBe('/res/v1/web/search?q=brave+api&count=5');
  });

  it('reports an unset API key and an empty query as readable failures', async () => {
    const before = brave.requests.length;
    expect(await run(await tools.one(acme.id, 'brave_no_key'), acme.id, { query: 'x' })).toEqual({
      ok: false,
      error: 'The tool is misconfigured: a secret it needs is not set',
    });
    expect(await run(await tools.one(acme.id, 'brave_search'), acme.id, { query: '   ' })).toEqual({
      ok: false,
      error: 'The "query" argument must be a non-empty string',
    });
    expect(brave.requests.length).toBe(before);
  });

  it('refuses a search configuration without the provider fields', async () => {
    await expect(
      tools.tool(acme.id, { name: 'bad_search', kind: 'web_search', config: { provider: 'bing' } }),
    ).rejects.toThrow(/config.provider must be "searxng" or "brave"/);
    await expect(
      tools.tool(acme.id, { name: 'bad_search', kind: 'web_search', config: { provider: 'brave' } }),
    ).rejects.toThrow(/config.apiKeyEnv must name an environment variable/);
  });

  describe('offline: web_search with external_web_access false in a request', () => {
    const offline = (org: SeededOrganization, tool: Record<string, unknown>, include = true) =>
      call(app.baseUrl, 'POST', '/v1/responses', {
        key: org.keys.assistant,
        body: {
          model: `asst_${org.assistantId}`,
          input: 'Search the web for switchboard tools',
          tools: [{ type: 'web_search', external_web_access: false, ...tool }],
          ...(include ? { include: ['web_search_call.action.sources'] } : {}),
        },
      });
    const searchItem = (body: any) => body.output.find((item: any) => item.type === 'web_search_call');

    it("answers from the organization's earlier live results and fetches nothing", async () => {
      // A live search through the catalogue's tool fills the cache.
      await run(await tools.one(acme.id, 'web_search'), acme.id, { query: 'switchboard tools' });
      const before = searxng.requests.length + brave.requests.length;
      const reply = await offline(acme, { search_context_size: 'low' });
      expect(reply.status).toBe(200);
      expectValidResponse(reply.body);
      expect(searchItem(reply.body)).toEqual({
        type: 'web_search_call',
        id: expect.stringMatching(/^ws_/),
        status: 'completed',
        action: {
          type: 'search',
          query: 'switchboard tools',
          sources: [
            { type: 'url', url: 'https://docs.example/a' },
            { type: 'url', url: 'https://example.org/b' },
          ],
        },
      });
      expect(reply.body.output_text).toContain('How tools work');
      expect(reply.body.tools).toEqual([
        { type: 'web_search', external_web_access: false, search_context_size: 'low' },
      ]);
      expect(searxng.requests.length + brave.requests.length).toBe(before);
    });

    it('narrows to allowed_domains, lists sources only when included, and keeps each cache to its organization', async () => {
      const narrowed = await offline(acme, { filters: { allowed_domains: ['https://Example.org/'] } });
      expect(searchItem(narrowed.body).action.sources).toEqual([
        { type: 'url', url: 'https://example.org/b' },
      ]);
      expect(narrowed.body.tools[0].filters).toEqual({ allowed_domains: ['example.org'] });
      const plain = await offline(acme, {}, false);
      expect(searchItem(plain.body).action).toEqual({ type: 'search', query: 'switchboard tools' });
      const other = await app.seedOrganization('web-offline-other');
      const elsewhere = await offline(other, {});
      expect(elsewhere.status).toBe(200);
      expect(searchItem(elsewhere.body).action.sources).toEqual([]);
    });

    it('refuses live access, a location and unknown fields by name', async () => {
      for (const [tool, message] of [
        [
          { external_web_access: true },
          /tools\[0\]\.external_web_access: a request's web_search runs offline only/,
        ],
        [{ external_web_access: undefined }, /tools\[0\]\.external_web_access/],
        [{ user_location: { type: 'approximate', country: 'FR' } }, /tools\[0\]\.user_location/],
        [{ search_context_size: 'huge' }, /tools\[0\]\.search_context_size/],
        [{ filters: { allowed_domains: ['not a domain'] } }, /allowed_domains\[0\] is not a domain/],
        [{ return_token_budget: 10 }, /Unknown parameter: tools\[0\]\.return_token_budget/],
      ] as const) {
        const reply = await offline(acme, tool);
        expect(reply.status).toBe(400);
        expect(reply.body.error.type).toBe('invalid_request_error');
        expect(reply.body.error.message).toMatch(message);
      }
    });
  });
});
