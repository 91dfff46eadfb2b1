import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { getDataSourceToken } from '@nestjs/typeorm';
import { Redis } from 'ioredis';
import type { DataSource, QueryRunner } from 'typeorm';
import { ApiKeysService } from '../src/api-keys/api-keys.service.js';
import { AssistantsService } from '../src/assistants/assistants.service.js';
import { createApp, type RunningApp } from '../src/bootstrap/create-app.js';
import { loadConfig, type AppConfig } from '../src/config/app-config.js';
import { shutDownGracefully } from '../src/lifecycle/graceful-shutdown.js';
import { OrganizationsService } from '../src/organizations/organizations.service.js';
import { call, type ApiReply } from './support/http.js';
import { openStreamAtFirstDelta, parseSse } from './support/sse.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';

/** One instance of the service, as a replica would run it, on a database that may be shared. */
interface Replica {
  baseUrl: string;
  running: RunningApp;
  config: AppConfig;
  dataSource: DataSource;
}

async function startReplica(database: TestDatabase, env: Record<string, string> = {}): Promise<Replica> {
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    QUICKSTART: 'false',
    METRICS_PUBLIC: 'true',
    ...database.env,
    ...env,
  });
  const running = await createApp(config, { logger: false });
  await running.app.listen(0, '127.0.0.1');
  const { port } = running.app.getHttpServer().address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    running,
    config,
    dataSource: running.app.get<DataSource>(getDataSourceToken()),
  };
}

interface Tenant {
  id: string;
  key: string;
  assistantId: string;
}

/** An organization (with its own rate limit, or the default), a full-access key and an assistant. */
async function seedTenant(
  replica: Replica,
  slug: string,
  options: { rateLimitPerMinute?: number; model?: unknown } = {},
): Promise<Tenant> {
  const app = replica.running.app;
  const organization = await app
    .get(OrganizationsService)
    .create({ slug, rateLimitPerMinute: options.rateLimitPerMinute ?? null });
  const assistant = await app.get(AssistantsService).create(organization.id, {
    name: `${slug} assistant`,
    model: options.model ?? { provider: 'offline' },
  });
  const { secret } = await app.get(ApiKeysService).create(organization.id, 'test', ['full_access']);
  return { id: organization.id, key: secret, assistantId: assistant.id };
}

/** A cheap authenticated request: it counts against the organization's limit and answers 404. */
function lookup(replica: Replica, key: string): Promise<ApiReply> {
  return call(replica.baseUrl, 'GET', '/v1/responses/resp_00000000-0000-4000-8000-000000000000', { key });
}

/** An offline assistant that streams `words` tokens, `delayMs` apart. */
function slowModel(words: number, delayMs: number): unknown {
  const reply = Array.from({ length: words }, (_, i) => `word${i}`).join(' ');
  return { provider: 'offline', tokenDelayMs: delayMs, script: [{ match: '.', reply }] };
}

/** Starts a stream and resolves once its first text delta has arrived, so it is surely in flight. */
async function openStream(baseUrl: string, key: string, model: string) {
  const stream = await openStreamAtFirstDelta(baseUrl, key, model);
  return {
    abort: stream.abort,
    /** Reads the rest of the stream and parses everything received. */
    async finish() {
      const raw = await stream.rest();
      return { raw, ...parseSse(raw) };
    },
  };
}

async function metricValue(replica: Replica, name: string): Promise<number> {
  const text = (await call(replica.baseUrl, 'GET', '/metrics')).body as string;
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `));
  return Number(line?.split(' ')[1]);
}

describe('per-organization rate limits in one process', () => {
  let database: TestDatabase;
  let replica: Replica;

  beforeAll(async () => {
    database = await createTestDatabase();
    replica = await startReplica(database, {
      RATE_LIMIT_DEFAULT_PER_MINUTE: '3',
      // Limits read fresh on every request, so an administrator's change shows at once here.
      RATE_LIMIT_CACHE_SECONDS: '0',
      DATABASE_POOL_MAX: '2',
    });
  });
  afterAll(async () => {
    await replica?.running.close();
    await database?.drop();
  });

  it('answers 429 with Retry-After once the default is used up, and leaves other organizations alone', async () => {
    const limited = await seedTenant(replica, 'limited');
    const roomy = await seedTenant(replica, 'roomy', { rateLimitPerMinute: 10 });

    for (let i = 0; i < 3; i++) {
      const reply = await lookup(replica, limited.key);
      expect(reply.status).toBe(404);
      expect(reply.headers.get('x-ratelimit-limit-requests')).toBe('3');
      expect(reply.headers.get('x-ratelimit-remaining-requests')).toBe(String(2 - i));
    }
    const refused = await lookup(replica, limited.key);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      error: { type: 'rate_limit_error', code: 'rate_limit_exceeded', message: expect.any(String) },
    });
    const retryAfter = refused.headers.get('retry-after');
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(retryAfter)).toBeLessThanOrEqual(60);
    expect(refused.headers.get('x-ratelimit-remaining-requests')).toBe('0');

    // Every route of the organization shares the budget, POST /v1/responses included.
    const post = await call(replica.baseUrl, 'POST', '/v1/responses', {
      key: limited.key,
      body: { model: limited.assistantId, input: 'hi' },
    });
    expect(post.status).toBe(429);

    // Another organization, with a limit of its own, is untouched.
    for (let i = 0; i < 4; i++) expect((await lookup(replica, roomy.key)).status).toBe(404);
    expect((await lookup(replica, roomy.key)).headers.get('x-ratelimit-remaining-requests')).toBe('5');

    // Requests no key authenticated are not counted and never turn into 429s.
    expect((await call(replica.baseUrl, 'GET', '/v1/responses/resp_x')).status).toBe(401);
    expect((await call(replica.baseUrl, 'GET', '/healthz')).status).toBe(200);
  });

  it("applies the administrator's new limit for an organization", async () => {
    const tenant = await seedTenant(replica, 'raised');
    for (let i = 0; i < 3; i++) expect((await lookup(replica, tenant.key)).status).toBe(404);
    expect((await lookup(replica, tenant.key)).status).toBe(429);
    await replica.running.app.get(OrganizationsService).setRateLimit(tenant.id, 100);
    const reply = await lookup(replica, tenant.key);
    expect(reply.status).toBe(404);
    expect(reply.headers.get('x-ratelimit-limit-requests')).toBe('100');
    // The window's count carries over: five requests so far, the refused one included.
    expect(reply.headers.get('x-ratelimit-remaining-requests')).toBe('95');
  });

  it('answers 503 service_overloaded when the database pool stays exhausted, and recovers', async () => {
    const tenant = await seedTenant(replica, 'pool');
    const fresh = await replica.running.app.get(ApiKeysService).create(tenant.id, 'fresh', ['full_access']);
    // Hold every pooled connection, as a burst of slow queries would.
    const held: QueryRunner[] = [];
    for (let i = 0; i < 2; i++) {
      const runner = replica.dataSource.createQueryRunner();
      await runner.connect();
      held.push(runner);
    }
    try {
      // An unseen key has to be looked up: the request waits for a connection, then gives up.
      const shed = await lookup(replica, fresh.secret);
      expect(shed.status).toBe(503);
      expect(shed.body.error).toEqual({
        type: 'server_error',
        code: 'service_overloaded',
        message: expect.any(String),
      });
      expect(shed.headers.get('retry-after')).toBe('1');
      expect(JSON.stringify(shed.body)).not.toMatch(/timeout exceeded|pg|SELECT/i);
    } finally {
      for (const runner of held) await runner.release();
    }
    expect((await lookup(replica, fresh.secret)).status).toBe(404);
  });
});

describe('in-flight cap of a replica', () => {
  let database: TestDatabase;
  let replica: Replica;
  let tenant: Tenant;

  beforeAll(async () => {
    database = await createTestDatabase();
    replica = await startReplica(database, {
      MAX_IN_FLIGHT_RESPONSES: '2',
      // The replica-wide cap, with one organization: its share is the whole cap here.
      MAX_IN_FLIGHT_PER_ORGANIZATION: '2',
      // A Redis nobody listens on: counting falls back to this process instead of failing requests.
      REDIS_URL: 'redis://127.0.0.1:1',
    });
    tenant = await seedTenant(replica, 'busy', { model: slowModel(30, 50) });
  });
  afterAll(async () => {
    await replica?.running.close();
    await database?.drop();
  });

  it('sheds response requests beyond the cap with 503 and Retry-After, then recovers', async () => {
    const first = await openStream(replica.baseUrl, tenant.key, tenant.assistantId);
    const second = await openStream(replica.baseUrl, tenant.key, tenant.assistantId);

    const shed = await call(replica.baseUrl, 'POST', '/v1/responses', {
      key: tenant.key,
      body: { model: tenant.assistantId, input: 'one more' },
    });
    expect(shed.status).toBe(503);
    expect(shed.body.error).toEqual({
      type: 'server_error',
      code: 'service_overloaded',
      message: expect.any(String),
    });
    expect(shed.headers.get('retry-after')).toBe('1');
    // Other routes are not capped.
    expect((await lookup(replica, tenant.key)).status).toBe(404);

    // One client leaves, the other stream runs to its end: both slots come back.
    first.abort();
    const rest = await second.finish();
    expect(rest.events.map((event) => event.event)).toContain('response.completed');
    while ((await metricValue(replica, 'switchboard_responses_in_flight')) > 0) {
      await new Promise((resolve) => setImmediate(resolve));
    }

    const again = await call(replica.baseUrl, 'POST', '/v1/responses', {
      key: tenant.key,
      body: { model: tenant.assistantId, input: 'now' },
    });
    expect(again.status).toBe(200);
    expect(await metricValue(replica, 'switchboard_shed_requests_total{reason="overload"}')).toBe(1);
    expect(
      await metricValue(
        replica,
        'switchboard_http_requests_total{method="POST",route="/v1/responses",status="503"}',
      ),
    ).toBe(1);
  });

  it('keeps enforcing limits in process while Redis is unreachable', async () => {
    const tight = await seedTenant(replica, 'tight', { rateLimitPerMinute: 2 });
    expect((await lookup(replica, tight.key)).status).toBe(404);
    expect((await lookup(replica, tight.key)).status).toBe(404);
    expect((await lookup(replica, tight.key)).status).toBe(429);
    expect(await metricValue(replica, 'switchboard_rate_limit_store_errors_total')).toBeGreaterThan(0);
  });
});

describe('three replicas sharing one PostgreSQL database and one Redis', () => {
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const prefix = `switchboard-test-${randomBytes(6).toString('hex')}`;
  let database: TestDatabase;
  let replicas: Replica[] = [];
  let redis: Redis;

  beforeAll(async () => {
    redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await redis.connect();
    database = await createTestDatabase();
    // One after another: the first migrates the shared schema, the others find it current.
    for (let i = 0; i < 3; i++) {
      replicas.push(await startReplica(database, { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: prefix }));
    }
  });
  afterAll(async () => {
    // The replica that owns an embedded database closes last.
    for (const replica of [...replicas].reverse()) await replica.running.close().catch(() => undefined);
    await database?.drop();
    if (redis) {
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    }
  });

  it('holds an organization limit across replicas, with requests spread round-robin', async () => {
    const shared = await seedTenant(replicas[0], 'shared', { rateLimitPerMinute: 6 });
    const other = await seedTenant(replicas[0], 'other');

    const statuses: number[] = [];
    for (let i = 0; i < 9; i++) statuses.push((await lookup(replicas[i % 3], shared.key)).status);
    // In-process counters would allow 6 on each replica; the shared count allows 6 in all.
    expect(statuses).toEqual([404, 404, 404, 404, 404, 404, 429, 429, 429]);
    expect(await redis.get(`${prefix}:rl:org:${shared.id}`)).toBe('9');

    for (const replica of replicas) expect((await lookup(replica, other.key)).status).toBe(404);
  });

  it('continues a thread started on one replica on the others', async () => {
    const tenant = await seedTenant(replicas[0], 'threads');
    const first = await call(replicas[0].baseUrl, 'POST', '/v1/responses', {
      key: tenant.key,
      body: { model: tenant.assistantId, input: 'first turn' },
    });
    expect(first.status).toBe(200);
    const second = await call(replicas[1].baseUrl, 'POST', '/v1/responses', {
      key: tenant.key,
      body: { model: tenant.assistantId, input: 'second turn', previous_response_id: first.body.id },
    });
    expect(second.status).toBe(200);
    expect(second.body.previous_response_id).toBe(first.body.id);
    const third = await call(replicas[2].baseUrl, 'POST', '/v1/responses', {
      key: tenant.key,
      body: { model: tenant.assistantId, input: 'third turn', previous_response_id: second.body.id },
    });
    expect(third.status).toBe(200);
    expect(third.body.previous_response_id).toBe(second.body.id);
  });

  it('lets a stream finish on a replica that shuts down while the others keep serving', async () => {
    const tenant = await seedTenant(replicas[0], 'draining', { model: slowModel(20, 50) });
    // The last replica leaves: the first one may own the embedded database the others use.
    const leaving = replicas[2];
    const staying = replicas.slice(0, 2);
    const stream = await openStream(leaving.baseUrl, tenant.key, tenant.assistantId);

    const shutdown = shutDownGracefully(leaving.running, { shutdownDelayMs: 0, shutdownGraceMs: 30_000 });
    expect((await call(staying[0].baseUrl, 'GET', '/readyz')).status).toBe(200);

    // The leaving replica takes no new work: refused connection, or 503 on a kept-alive one.
    const refused = await call(leaving.baseUrl, 'POST', '/v1/responses', {
      key: tenant.key,
      body: { model: tenant.assistantId, input: 'too late' },
    }).catch(() => undefined);
    if (refused) {
      expect(refused.status).toBe(503);
      expect(refused.body.error.code).toBe('service_overloaded');
    }

    // The others serve, a new stream included, while the old one is still running.
    for (const replica of staying) {
      const reply = await call(replica.baseUrl, 'POST', '/v1/responses', {
        key: tenant.key,
        body: { model: tenant.assistantId, input: 'elsewhere' },
      });
      expect(reply.status).toBe(200);
    }

    const finished = await stream.finish();
    const types = finished.events.map((event) => event.event ?? event.data);
    expect(types).toContain('response.completed');
    expect(types).not.toContain('response.error');
    expect(types[types.length - 1]).toBe('[DONE]');
    await shutdown;
    replicas = staying;
  });
});
