import { FakeUpstream } from './support/fake-upstream.js';
import { call, type ApiReply } from './support/http.js';
import { rawRequest, type RawReply } from './support/raw-http.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

/** `levels` arrays inside each other: `[[[…]]]`. */
const nest = (levels: number): unknown => JSON.parse('['.repeat(levels) + ']'.repeat(levels));

/** Header values travel as bytes; Node's fetch sends a string's chars ≤ U+00FF as those bytes. */
const utf8Bytes = (text: string) => Buffer.from(text, 'utf8').toString('latin1');

function expectInvalid(res: ApiReply | RawReply, status = 400, code = 'invalid_request'): void {
  expect({ status: res.status, body: res.body }).toEqual({
    status,
    body: { error: { type: 'invalid_request_error', code, message: expect.any(String) } },
  });
}

/**
 * The edge every request passes before any route (src/common/http): text PostgreSQL cannot
 * store is refused by name wherever it is (body at any depth, keys, headers, path, query), deep
 * nesting is refused before anything recursive touches it, malformed HTTP still gets the
 * envelope, and nothing a refused request carried is stored.
 */
describe('request edge', () => {
  let app: TestApp;
  let upstream: FakeUpstream;
  let org: SeededOrganization;

  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    app = await startTestApp({ UPSTREAM_MAX_RETRIES: '0', MAX_HEADER_SIZE: '24kb' });
    org = await app.seedOrganization('edge', {
      provider: 'openai-compatible',
      baseUrl: upstream.url,
      model: 'edge-model',
      functionCalling: true,
    });
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.stop();
  });

  /** Row counts of every table the API writes. */
  async function counts(): Promise<Record<string, number>> {
    const tables = ['responses', 'conversations', 'user_claims', 'memory_items', 'memory_opt_outs'];
    const entries = await Promise.all(
      tables.map(async (table) => {
        const [row] = await app.dataSource.query<{ n: number }[]>(`SELECT count(*)::int AS n FROM ${table}`);
        return [table, row.n] as const;
      }),
    );
    return Object.fromEntries(entries);
  }

  const turn = (body: unknown, headers: Record<string, string> = {}) =>
    call(app.baseUrl, 'POST', '/v1/responses', { key: org.keys.assistant, headers, body });

  describe('NUL and unpaired surrogates in bodies', () => {
    it.each([
      ['input', { input: 'hello\u0000' }, 'input must not contain the NUL character'],
      ['instructions', { input: 'hi', instructions: 'be \ud800 nice' }, 'instructions contains an unpaired'],
      [
        'a content part',
        { input: [{ role: 'user', content: [{ type: 'input_text', text: 'x\udc00' }] }] },
        'input[0].content[0].text contains an unpaired',
      ],
      ['an object key', { input: 'hi', metadata: { 'k\u0000': 'v' } }, 'A key of metadata must not'],
      ['a key of the body', { input: 'hi', '\ud800': 1 }, 'A key of the request body contains'],
    ])(
      'refuses %s in a turn, streamed or not, naming the field; stores nothing',
      async (_, body, message) => {
        const before = await counts();
        const requests = upstream.requests.length;
        for (const stream of [false, true]) {
          const res = await turn({ model: org.assistantId, ...body, stream });
          expectInvalid(res);
          expect(res.body.error.message).toContain(message);
        }
        expect(await counts()).toEqual(before);
        expect(upstream.requests.length).toBe(requests);
      },
    );

    it('accepts well-formed text: paired surrogates (emoji), other control characters', async () => {
      upstream.script({ text: 'fine' });
      const res = await turn({ model: org.assistantId, input: 'smile 😀 tab\t bell\u0007' });
      expect(res.status).toBe(200);
    });

    it('refuses a claim whose userId holds a lone surrogate, and stores nothing (it used to store U+FFFD and answer 500)', async () => {
      const before = await counts();
      for (const userId of ['u\ud800', 'u\u0000']) {
        const single = await call(app.baseUrl, 'POST', '/v1/user-claims', {
          key: org.keys.user,
          body: { userId, claimKey: 'plan', claimValue: 'gold' },
        });
        expectInvalid(single);
        expect(single.body.error.message).toMatch(/^userId /);
        const bulk = await call(app.baseUrl, 'POST', '/user-claims/bulk', {
          key: org.keys.user,
          body: {
            claims: [
              { userId: 'ok', claimKey: 'a', claimValue: 1 },
              { userId, claimKey: 'b', claimValue: 2 },
            ],
          },
        });
        expectInvalid(bulk);
        expect(bulk.body.error.message).toMatch(/^claims\[1\]\.userId /);
      }
      const value = await call(app.baseUrl, 'POST', '/user-claims', {
        key: org.keys.user,
        body: { userId: 'v', claimKey: 'k', claimValue: { list: ['a', { deep: 'b\u0000' }] } },
      });
      expectInvalid(value);
      expect(value.body.error.message).toContain(
        'claimValue.list[1].deep must not contain the NUL character',
      );
      expect(await counts()).toEqual(before);
    });
  });

  describe('nesting', () => {
    it.each([5_000, 100_000])(
      'refuses a claimValue nested %i levels with 400, single and bulk, before anything recursive',
      async (levels) => {
        const before = await counts();
        const single = await call(app.baseUrl, 'POST', '/v1/user-claims', {
          key: org.keys.user,
          body: `{"userId":"deep","claimKey":"k","claimValue":${'['.repeat(levels)}${']'.repeat(levels)}}`,
        });
        expectInvalid(single);
        expect(single.body.error.message).toMatch(/^claimValue\[0\].* nests deeper than 256 levels$/);
        const bulk = await call(app.baseUrl, 'POST', '/v1/user-claims/bulk', {
          key: org.keys.user,
          body: `{"claims":[{"userId":"deep","claimKey":"k","claimValue":${'['.repeat(levels)}${']'.repeat(levels)}}]}`,
        });
        expectInvalid(bulk);
        expect(bulk.body.error.message).toMatch(/^claims\[0\]\.claimValue\[0\].* nests deeper than 256/);
        const deepTurn = await turn(
          `{"model":"${org.assistantId}","input":"hi","metadata":{"a":${'['.repeat(levels)}${']'.repeat(levels)}}}`,
        );
        expectInvalid(deepTurn);
        expect(await counts()).toEqual(before);
        expect((await call(app.baseUrl, 'GET', '/healthz')).status).toBe(200);
      },
    );

    it('counts levels below the top of the body: 256 are stored, 257 refused', async () => {
      const ok = await call(app.baseUrl, 'POST', '/user-claims', {
        key: org.keys.user,
        body: { userId: 'depth', claimKey: 'ok', claimValue: nest(256) },
      });
      expect(ok.status).toBe(200);
      const over = await call(app.baseUrl, 'POST', '/user-claims', {
        key: org.keys.user,
        body: { userId: 'depth', claimKey: 'over', claimValue: nest(257) },
      });
      expectInvalid(over);
    });
  });

  describe('path and query', () => {
    it.each([
      ['GET', '/user-claims/u1%00'],
      ['GET', '/user-claims/%00'],
      ['DELETE', '/v1/user-claims/u1%00/plan'],
      ['GET', '/v1/user-claims/u1/plan%ED%A0%80'],
      ['GET', '/v1/user-claims/%E0%A4%A'],
      ['GET', '/v1/user-claims/%ZZ'],
      ['GET', '/v1/responses/resp_%00'],
      ['DELETE', '/v1/memory/%C0%80'],
      ['GET', '/v1/chat/history/conversations/%FF/messages'],
      ['GET', '/v1/memory?assistant_id=%00'],
      ['GET', '/v1/chat/history/conversations?after=%ED%B0%80'],
      ['GET', '/v1/memory?%ZZ=1'],
      ['GET', '/no/such/route%00'],
    ])('%s %s: 400 invalid_request, not a database error', async (method, path) => {
      const res = await call(app.baseUrl, method, path, {
        key: org.keys.full_access,
        headers: { 'x-user-id': 'u1' },
      });
      expectInvalid(res);
    });

    it('still decodes what is well-formed, "+" as itself in paths', async () => {
      const userId = 'ann+bob/é';
      await call(app.baseUrl, 'POST', '/user-claims', {
        key: org.keys.user,
        body: { userId, claimKey: 'k', claimValue: 1 },
      });
      const res = await call(
        app.baseUrl,
        'GET',
        `/user-claims/${encodeURIComponent(userId).replace('%2B', '+')}`,
        {
          key: org.keys.user,
        },
      );
      expect(res.status).toBe(200);
      expect(res.body.map((claim: { userId: string }) => claim.userId)).toEqual([userId]);
    });
  });

  describe('headers', () => {
    it('reads x-user-id as UTF-8: the same user as in a JSON body (claims reach the turn, history lists it)', async () => {
      const userId = 'José 🌍 Ñandú';
      const claim = await call(app.baseUrl, 'POST', '/v1/user-claims', {
        key: org.keys.user,
        body: { userId, claimKey: 'city', claimValue: 'Lisboa' },
      });
      expect(claim.status).toBe(200);
      upstream.script({ text: 'Olá' });
      const res = await turn(
        { model: org.assistantId, input: 'where do I live?' },
        { 'x-user-id': utf8Bytes(userId) },
      );
      expect(res.status).toBe(200);
      const system = (upstream.last.body.messages as { role: string; content: string }[])
        .filter((message) => message.role === 'system')
        .map((message) => message.content)
        .join('\n');
      expect(system).toContain('Lisboa');
      const stored = await app.dataSource.query<{ user_id: string }[]>(
        'SELECT DISTINCT user_id FROM conversations WHERE user_id LIKE $1',
        ['José%'],
      );
      expect(stored).toEqual([{ user_id: userId }]);
      const history = await call(app.baseUrl, 'GET', '/v1/chat/history/conversations', {
        key: org.keys.user,
        headers: { 'x-user-id': utf8Bytes(userId) },
      });
      expect(history.status).toBe(200);
      expect(history.body).toHaveLength(1);
    });

    it('refuses an x-user-id that is not UTF-8, and a user header given twice', async () => {
      const before = await counts();
      const latin1 = await turn({ model: org.assistantId, input: 'hi' }, { 'x-user-id': 'Jos\u00e9' });
      expectInvalid(latin1);
      expect(latin1.body.error.message).toBe('Header x-user-id must be UTF-8 text');
      const surrogate = await call(app.baseUrl, 'GET', '/v1/memory', {
        key: org.keys.user,
        headers: { 'x-user-id': '\u00ed\u00a0\u0080' }, // the UTF-8 bytes of a lone U+D800
      });
      expectInvalid(surrogate);
      const twice = await rawRequest(
        app.baseUrl,
        'GET /v1/memory HTTP/1.1\r\nHost: x\r\nConnection: close\r\n' +
          `x-api-key: ${org.keys.user}\r\nx-user-id: alice\r\nx-user-id: bob\r\n\r\n`,
      );
      expectInvalid(twice);
      expect(twice.body.error.message).toBe('Header x-user-id must be given once');
      expect(await counts()).toEqual(before);
    });

    it('walks the JSON of x-user-tokens like a body', async () => {
      const res = await turn(
        { model: org.assistantId, input: 'hi' },
        { 'x-user-tokens': JSON.stringify({ github: 'tok\u0000' }) },
      );
      expectInvalid(res);
      expect(res.body.error.message).toContain('Header x-user-tokens, field github must not contain');
    });
  });

  describe('malformed HTTP gets the envelope too', () => {
    // Each one a claim write with a valid key, which a lenient parser would store (the last case
    // shows the well-formed one does): a refusal that stored nothing is then the parser's doing.
    const claim = '{"userId":"raw-edge","claimKey":"k","claimValue":1}';
    const length = `Content-Length: ${claim.length}\r\n`;
    const head =
      'POST /v1/user-claims HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Api-Key: {KEY}\r\n';
    it.each([
      ['a bare CR inside a header value', `${head}X-A: a\rb\r\n${length}\r\n${claim}`],
      ['a bare LF ending a header line', `${head}X-A: b\n${length}\r\n${claim}`],
      ['a NUL in a header value', `${head}X-A: a\u0000b\r\n${length}\r\n${claim}`],
      ['conflicting Content-Length', `${head}${length}Content-Length: ${claim.length + 1}\r\n\r\n${claim} `],
      [
        'Content-Length with chunked',
        `${head}${length}Transfer-Encoding: chunked\r\n\r\n${claim.length.toString(16)}\r\n${claim}\r\n0\r\n\r\n`,
      ],
      ['a malformed chunk size', `${head}Transfer-Encoding: chunked\r\n\r\nzz\r\n${claim}\r\n0\r\n\r\n`],
      ['a space in a header name', `${head}Bad Name: 1\r\n${length}\r\n${claim}`],
      ['an invalid method', `${head.replace('POST', 'P@ST')}${length}\r\n${claim}`],
    ])('%s: 400 invalid_request, connection closed', async (_, request) => {
      const before = await counts();
      const res = await rawRequest(app.baseUrl, request.replace('{KEY}', org.keys.full_access));
      expectInvalid(res);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers.connection).toBe('close');
      expect(await counts()).toEqual(before);
    });

    it('stores the same claim sent well-formed (the control of the cases above)', async () => {
      const before = await counts();
      const res = await rawRequest(
        app.baseUrl,
        `${head.replace('{KEY}', org.keys.full_access)}Connection: close\r\n${length}\r\n${claim}`,
      );
      expect(res.status).toBe(200);
      expect(await counts()).toEqual({ ...before, user_claims: before.user_claims + 1 });
      await call(app.baseUrl, 'DELETE', '/v1/user-claims/raw-edge/k', { key: org.keys.full_access });
    });

    it.each([
      ['x-user-tokens', 60 * 1024],
      ['authorization', 100 * 1024],
    ])('a %s header of %i bytes: 431 headers_too_large in the envelope', async (name, size) => {
      const res = await rawRequest(
        app.baseUrl,
        `GET /v1/memory HTTP/1.1\r\nHost: x\r\n${name}: ${'a'.repeat(size)}\r\n\r\n`,
      );
      expect(res.status).toBe(431);
      expect(res.body).toEqual({
        error: { type: 'invalid_request_error', code: 'headers_too_large', message: expect.any(String) },
      });
    });

    it('takes the header limit from MAX_HEADER_SIZE (24 KB here, above Node’s 16 KB default)', async () => {
      const res = await call(app.baseUrl, 'GET', '/v1/memory', {
        key: org.keys.user,
        headers: { 'x-user-id': 'big-headers', 'x-user-token': 't'.repeat(20 * 1024) },
      });
      expect(res.status).toBe(200);
    });

    it('keeps serving afterwards', async () => {
      expect((await call(app.baseUrl, 'GET', '/healthz')).status).toBe(200);
    });
  });

  it('keeps idle connections open above a load balancer’s idle timeout, and says for how long', async () => {
    // Node's own 5 s would let a proxy that keeps connections for 60 s reuse one being closed.
    const reply = await call(app.baseUrl, 'GET', '/healthz');
    expect(reply.headers.get('keep-alive')).toBe('timeout=65');
  });

  it('answers unknown routes with its own message, not the framework’s', async () => {
    for (const [method, path] of [
      ['POST', '/v1/responses/resp_1/archive'],
      ['GET', '/v2/anything?x=1'],
      ['PATCH', '/v1/user-claims'],
    ]) {
      const res = await call(app.baseUrl, method, path, { key: org.keys.full_access });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({
        error: {
          type: 'not_found_error',
          code: 'not_found',
          message: 'No endpoint has this method and path; /openapi.json lists every route',
        },
      });
    }
  });
});
