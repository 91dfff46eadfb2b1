import { randomBytes } from 'node:crypto';
import { Logger, type LoggerService } from '@nestjs/common';
import { Redis } from 'ioredis';
import pg from 'pg';
import { FakeUpstream } from './support/fake-upstream.js';
import { FaultProxy } from './support/fault-proxy.js';
import { call, type ApiReply } from './support/http.js';
import { parseSse, postStream, type SseEvent } from './support/sse.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';

/**
 * Faults injected at the transport level by a loopback TCP proxy between the service and each
 * dependency: refused, reset mid-query or mid-stream, stalled, slow, and back. During an outage
 * every answer is a 503 in the envelope with Retry-After (never a 500); afterwards the same
 * process serves again, and nothing a client saw completed is lost.
 */

const serverUrl = process.env.DATABASE_URL;
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Repeats `attempt` until it answers 200 (recovery takes the pool or client a moment). */
async function untilOk(attempt: () => Promise<ApiReply>, what: string): Promise<ApiReply> {
  const deadline = Date.now() + 20_000;
  let last: ApiReply | undefined;
  while (Date.now() < deadline) {
    last = await attempt();
    if (last.status === 200) return last;
    // While recovering, only a 503 with Retry-After is acceptable.
    expectOutage(last);
    await new Promise((done) => setTimeout(done, 200));
  }
  throw new Error(`${what} did not recover: last answer ${last?.status} ${JSON.stringify(last?.body)}`);
}

/** Waits (bounded) until `condition` holds. */
async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 20));
  }
}

function expectOutage(reply: ApiReply, code?: string): void {
  expect(reply.status).toBe(503);
  expect(reply.body).toEqual({
    error: { type: 'server_error', code: code ?? expect.any(String), message: expect.any(String) },
  });
  expect(Number(reply.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
}

/** Opens a stream, calls `midway` after the first text delta, and returns every event. */
async function streamWithFault(
  baseUrl: string,
  key: string,
  body: Record<string, unknown>,
  midway: () => void | Promise<void>,
): Promise<SseEvent[]> {
  const res = await fetch(`${baseUrl}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ ...body, stream: true }),
  });
  expect(res.status).toBe(200);
  const decoder = new TextDecoder();
  let raw = '';
  let faulted = false;
  for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
    raw += decoder.decode(chunk, { stream: true });
    if (!faulted && raw.includes('response.output_text.delta')) {
      faulted = true;
      await midway();
    }
  }
  expect(faulted).toBe(true);
  return parseSse(raw).events;
}

const slowReply = (words: number, delayMs: number) => ({
  provider: 'offline',
  tokenDelayMs: delayMs,
  script: [{ match: '.', reply: Array.from({ length: words }, (_, i) => `word${i}`).join(' ') }],
});

async function inProgressRows(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(
      `SELECT count(*) AS n FROM responses WHERE status = 'in_progress'`,
    );
    return Number(rows[0].n);
  } finally {
    await client.end();
  }
}

/** Keeps the service's log lines (level, context, msg) for assertions. */
class CapturedLogs implements LoggerService {
  readonly lines: { level: string; context?: string; msg: unknown }[] = [];
  private add(level: string, message: unknown, context?: unknown) {
    const msg =
      typeof message === 'object' && message !== null ? (message as { msg?: unknown }).msg : message;
    this.lines.push({ level, context: typeof context === 'string' ? context : undefined, msg });
  }
  log(message: unknown, context?: unknown) {
    this.add('log', message, context);
  }
  error(message: unknown, _trace?: unknown, context?: unknown) {
    this.add('error', message, context);
  }
  warn(message: unknown, context?: unknown) {
    this.add('warn', message, context);
  }
  count(level: string, msg: RegExp): number {
    return this.lines.filter((line) => line.level === level && msg.test(String(line.msg))).length;
  }
}

(serverUrl ? describe : describe.skip)(
  // The embedded database's socket is opened inside the service, so nothing can sit in between.
  'PostgreSQL behind a fault proxy (needs DATABASE_URL; skipped on the embedded database)',
  () => {
    let database: TestDatabase;
    let proxy: FaultProxy;
    let app: TestApp;
    let org: SeededOrganization;
    let slowOrg: SeededOrganization;
    const logs = new CapturedLogs();

    beforeAll(async () => {
      database = await createTestDatabase();
      const direct = new URL(database.url as string);
      proxy = await new FaultProxy(Number(direct.port || 5432), direct.hostname).start();
      // No key cache: every request needs the database from its first step. Short turn leases: a
      // turn whose final write met the outage is left `in_progress` until its lease lapses.
      app = await startTestApp(
        {
          API_KEY_CACHE_TTL_SECONDS: '0',
          TURN_LEASE_SECONDS: '2',
          TURN_LEASE_RENEW_MS: '100',
          TURN_SWEEP_MS: '200',
        },
        { reuse: { ...database, env: { DATABASE_URL: proxy.rewrite(database.url as string) } } },
      );
      Logger.overrideLogger(logs);
      org = await app.seedOrganization('db-faults');
      slowOrg = await app.seedOrganization('db-faults-slow', slowReply(20, 50));
    });
    afterAll(async () => {
      await proxy?.normal();
      await app?.close();
      await proxy?.close();
    });

    const turn = (input: string, userId = 'alice') =>
      call(app.baseUrl, 'POST', '/v1/responses', {
        key: org.keys.full_access,
        headers: { 'x-user-id': userId },
        body: { model: org.assistantId, input },
      });

    /** Everything the client saw completed is still there, in GET and in chat history. */
    async function expectStored(completed: ApiReply, userId = 'alice'): Promise<void> {
      const read = await call(app.baseUrl, 'GET', `/v1/responses/${completed.body.id}`, {
        key: org.keys.full_access,
        headers: { 'x-user-id': userId },
      });
      expect(read.status).toBe(200);
      expect(read.body).toEqual(completed.body);
      const history = await call(
        app.baseUrl,
        'GET',
        `/v1/chat/history/conversations/${completed.body.conversation.id}/messages`,
        { key: org.keys.full_access, headers: { 'x-user-id': userId } },
      );
      expect(history.status).toBe(200);
      expect(JSON.stringify(history.body)).toContain(completed.body.output_text);
    }

    it('connection refused: 503 service_unavailable with Retry-After on every route, then recovers', async () => {
      const before = await turn('before the outage');
      expect(before.status).toBe(200);

      await proxy.refuse();
      expectOutage(await turn('during the outage'), 'service_unavailable');
      expect((await turn('during the outage')).headers.get('retry-after')).toBe('2');
      expectOutage(
        await call(app.baseUrl, 'GET', `/v1/responses/${before.body.id}`, { key: org.keys.full_access }),
        'service_unavailable',
      );
      const stream = await postStream(app.baseUrl, org.keys.full_access, {
        model: org.assistantId,
        input: 'a stream during the outage',
      });
      expectOutage({ status: stream.status, headers: stream.headers, body: JSON.parse(stream.raw) });
      expect((await call(app.baseUrl, 'GET', '/healthz')).status).toBe(200);
      expect((await call(app.baseUrl, 'GET', '/readyz')).status).toBe(503);

      await proxy.normal();
      const after = await untilOk(() => turn('after the outage'), 'POST /v1/responses');
      await expectStored(before);
      await expectStored(after);
      expect(await inProgressRows(database.url as string)).toBe(0);

      // One line when it went down, one when it came back; none per failed request.
      expect(logs.count('error', /^database unavailable/)).toBe(1);
      for (let i = 0; i < 30 && logs.count('log', /^database available again/) === 0; i++) {
        await new Promise((done) => setTimeout(done, 100));
      }
      expect(logs.count('log', /^database available again/)).toBe(1);
      expect(logs.lines.filter((line) => line.level === 'error')).toHaveLength(1);
    });

    it('connections reset mid-stream: the stream ends with response.error service_unavailable', async () => {
      const events = await streamWithFault(
        app.baseUrl,
        slowOrg.keys.full_access,
        { model: slowOrg.assistantId, input: 'a long answer please' },
        () => proxy.reset(),
      );
      const last = events[events.length - 1];
      expect(last.json.type).toBe('response.error');
      expect(last.json.error).toEqual({
        type: 'server_error',
        code: 'service_unavailable',
        message: expect.any(String),
      });
      expect(events.some((event) => event.json?.type === 'response.completed')).toBe(false);
      expectOutage(await turn('while connections are reset'), 'service_unavailable');

      await proxy.normal();
      await expectStored(await untilOk(() => turn('after the resets'), 'POST /v1/responses'));
      // The cut turn's final write met the outage: its lease lapses and the sweep marks it failed.
      let stuck = await inProgressRows(database.url as string);
      for (let i = 0; i < 50 && stuck > 0; i++) {
        await new Promise((done) => setTimeout(done, 100));
        stuck = await inProgressRows(database.url as string);
      }
      expect(stuck).toBe(0);
    });

    it('a stalled server: 503 once the pool gives up connecting, then recovers', async () => {
      // Drop the pooled connections first, so the next request must open one through the stall.
      proxy.reset();
      const pool = (app.dataSource.driver as unknown as { master: { totalCount: number } }).master;
      for (let i = 0; i < 50 && pool.totalCount > 0; i++) await new Promise((done) => setTimeout(done, 100));
      expect(pool.totalCount).toBe(0);
      proxy.stall();
      expectOutage(await turn('during the stall'), 'service_unavailable');

      await proxy.normal();
      await expectStored(await untilOk(() => turn('after the stall'), 'POST /v1/responses'));
    });

    it('a slow server: turns still complete and are stored', async () => {
      proxy.slow(20);
      const slowTurn = await turn('on a slow network');
      expect(slowTurn.status).toBe(200);
      const stream = await postStream(app.baseUrl, org.keys.full_access, {
        model: org.assistantId,
        input: 'streamed on a slow network',
      });
      expect(stream.events.map((event) => event.json?.type)).toContain('response.completed');
      await proxy.normal();
      await expectStored(slowTurn);
    });

    it('a stream whose start cannot be recorded: plain 503 before any byte, its model call cancelled', async () => {
      // The start row is written while the model call is on its way. Caches warm (key,
      // assistant, budget), the outage meets the stream at that write, after the call was sent.
      const upstream = await new FakeUpstream().start();
      const cached = await startTestApp(
        { FAKE_UPSTREAM_KEY: 'sk-test', UPSTREAM_MAX_RETRIES: '0' },
        { reuse: { ...database, env: { DATABASE_URL: proxy.rewrite(database.url as string) } } },
      );
      try {
        const tenant = await cached.seedOrganization('db-faults-start', {
          provider: 'openai-compatible',
          baseUrl: upstream.url,
          model: 'fake-model',
          apiKeyEnv: 'FAKE_UPSTREAM_KEY',
        });
        const body = { model: tenant.assistantId, input: 'warm the caches' };
        expect((await postStream(cached.baseUrl, tenant.keys.full_access, body)).status).toBe(200);
        const sent = upstream.requests.length;
        const aborted = upstream.aborted;

        // The database stalls, so the start row waits while the model call reaches the upstream;
        // only then does the database go down under the waiting write.
        // The upstream never answers: only an abort from the service ends the call.
        proxy.stall();
        upstream.script({ hang: true });
        const streaming = postStream(cached.baseUrl, tenant.keys.full_access, body);
        await until(() => upstream.requests.length - sent === 1, 'the model call to reach the upstream');
        await proxy.refuse();
        const stream = await streaming;
        expectOutage({ status: stream.status, headers: stream.headers, body: JSON.parse(stream.raw) });
        // The model call that went out was cut, not left to run to its end.
        await until(() => upstream.aborted - aborted === 1, 'the model call to be aborted');
        expect([upstream.requests.length - sent, upstream.aborted - aborted]).toEqual([1, 1]);

        await proxy.normal();
        const after = await untilOk(
          () => call(cached.baseUrl, 'POST', '/v1/responses', { key: tenant.keys.full_access, body }),
          'POST /v1/responses',
        );
        expect(after.body.status).toBe('completed');
        expect(await inProgressRows(database.url as string)).toBe(0);
      } finally {
        await proxy.normal();
        await cached.stop();
        await upstream.stop();
      }
    });
  },
);

describe('Redis behind a fault proxy: rate limits fail open', () => {
  let proxy: FaultProxy;
  let app: TestApp;
  let org: SeededOrganization;
  let redis: Redis;
  const prefix = `switchboard-faults-${randomBytes(6).toString('hex')}`;

  beforeAll(async () => {
    const direct = new URL(redisUrl);
    redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect();
    proxy = await new FaultProxy(Number(direct.port || 6379), direct.hostname).start();
    app = await startTestApp({
      REDIS_URL: proxy.rewrite(redisUrl),
      REDIS_KEY_PREFIX: prefix,
      RATE_LIMIT_DEFAULT_PER_MINUTE: '1000',
    });
    org = await app.seedOrganization('redis-faults');
  });
  afterAll(async () => {
    await proxy?.normal();
    await app?.close();
    await proxy?.close();
    if (redis) {
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    }
  });

  const turn = () =>
    call(app.baseUrl, 'POST', '/v1/responses', {
      key: org.keys.full_access,
      body: { model: org.assistantId, input: 'hello' },
    });
  const sharedCount = async () => Number(await redis.get(`${prefix}:rl:org:${org.id}`));
  const storeErrors = async () => {
    const text = (await call(app.baseUrl, 'GET', '/metrics')).body as string;
    return Number(/^switchboard_rate_limit_store_errors_total (\d+)/m.exec(text)?.[1] ?? 0);
  };

  it.each([
    ['refused', () => proxy.refuse()],
    ['reset', () => Promise.resolve(proxy.reset())],
    ['stalled', () => Promise.resolve(proxy.stall())],
  ])(
    'answers normally while Redis is %s, and counts in Redis again once it is back',
    async (_name, fault) => {
      expect((await turn()).status).toBe(200);
      const errorsBefore = await storeErrors();
      await fault();
      for (let i = 0; i < 3; i++) expect((await turn()).status).toBe(200);
      expect(await storeErrors()).toBeGreaterThan(errorsBefore);

      await proxy.normal();
      // Counted in Redis again once ioredis has reconnected by itself (no restart).
      const counted = await sharedCount();
      const deadline = Date.now() + 20_000;
      while ((await sharedCount()) <= counted && Date.now() < deadline) {
        expect((await turn()).status).toBe(200);
        await new Promise((done) => setTimeout(done, 200));
      }
      expect(await sharedCount()).toBeGreaterThan(counted);
    },
  );
});

describe('the model provider behind a fault proxy', () => {
  let upstream: FakeUpstream;
  let proxy: FaultProxy;
  let app: TestApp;
  let org: SeededOrganization;

  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    proxy = await new FaultProxy(Number(new URL(upstream.url).port)).start();
    app = await startTestApp({ FAKE_UPSTREAM_KEY: 'sk-test', UPSTREAM_MAX_RETRIES: '0' });
    org = await app.seedOrganization('upstream-faults', {
      provider: 'openai-compatible',
      baseUrl: proxy.rewrite(upstream.url),
      model: 'fake-model',
      apiKeyEnv: 'FAKE_UPSTREAM_KEY',
      timeoutSeconds: 1,
    });
  });
  afterAll(async () => {
    await proxy?.normal();
    await app?.close();
    await proxy?.close();
    await upstream?.stop();
  });

  const turn = () =>
    call(app.baseUrl, 'POST', '/v1/responses', {
      key: org.keys.full_access,
      body: { model: org.assistantId, input: 'hello' },
    });
  const read = (id: string) => call(app.baseUrl, 'GET', `/v1/responses/${id}`, { key: org.keys.full_access });

  it('refused: JSON turns answer 503 upstream_unavailable with Retry-After; streams end with it', async () => {
    await proxy.refuse();
    expectOutage(await turn(), 'upstream_unavailable');
    const stream = await postStream(app.baseUrl, org.keys.full_access, {
      model: org.assistantId,
      input: 'hi',
    });
    const last = stream.events[stream.events.length - 1].json;
    expect(last.type).toBe('response.error');
    expect(last.error.code).toBe('upstream_unavailable');
    // The failed turn is stored as failed, not left in progress.
    const created = stream.events[0].json.response.id as string;
    expect((await read(created)).body.status).toBe('failed');

    await proxy.normal();
    const after = await untilOk(turn, 'POST /v1/responses');
    expect((await read(after.body.id)).body).toEqual(after.body);
  });

  it('reset mid-stream: response.error upstream_stream_interrupted, the partial turn stored as failed', async () => {
    upstream.script({ text: 'one two three four five six seven eight', tokenDelayMs: 50 });
    const events = await streamWithFault(
      app.baseUrl,
      org.keys.full_access,
      { model: org.assistantId, input: 'count' },
      () => proxy.reset(),
    );
    expect(events[events.length - 1].json.error.code).toBe('upstream_stream_interrupted');
    expect((await read(events[0].json.response.id)).body.status).toBe('failed');
    await proxy.normal();
    expect((await untilOk(turn, 'POST /v1/responses')).body.status).toBe('completed');
  });

  it('stalled: 503 upstream_timeout with Retry-After after the assistant timeout, then recovers', async () => {
    proxy.stall();
    expectOutage(await turn(), 'upstream_timeout');
    await proxy.normal();
    expect((await untilOk(turn, 'POST /v1/responses')).body.status).toBe('completed');
  });

  it('slow: turns complete', async () => {
    proxy.slow(20);
    const slow = await turn();
    expect(slow.status).toBe(200);
    expect(slow.body.output_text).toBe('Hello from the fake upstream.');
    await proxy.normal();
  });
});
