import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { RedisBusyStore } from '../src/llm/busy-store.js';
import { FakeUpstream } from './support/fake-upstream.js';
import { ANSWER } from './support/upstream-fault-scenarios.js';
import { call } from './support/http.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

/**
 * Least-busy balancing across replicas (`failover.balance: least-busy`, docs/resilience.md): with
 * REDIS_URL (CI runs one) every replica counts its running calls per target in Redis under a
 * lease, and orders a pool by every replica's counts; a replica that stops renewing (it crashed)
 * has its counts lapse. Two clients of the counter, then two replicas of the service.
 */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Polls (bounded) until `check` holds; the bound only ends a test that would hang. */
async function eventually(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await new Promise((done) => setTimeout(done, 25));
  }
}

describe('running-call counts shared in Redis', () => {
  let redis: Redis;
  const prefix = `busy-e2e-${process.pid}-${Date.now()}:`;

  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it("adds up every replica's counts, and a replica that stops renewing lapses after its lease", async () => {
    const lease = 400;
    const first = new RedisBusyStore(redis, prefix, randomUUID(), lease);
    const second = new RedisBusyStore(redis, prefix, randomUUID(), 60_000);
    await first.write([
      ['pool-a', 2],
      ['pool-b', 1],
    ]);
    await second.write([['pool-a', 1]]);
    expect(await first.read(['pool-a', 'pool-b', 'pool-c'])).toEqual([3, 1, 0]);
    expect(await second.read(['pool-a', 'pool-b'])).toEqual([3, 1]);
    // A count written again replaces the replica's own (never added twice); 0 removes it.
    await second.write([['pool-a', 2]]);
    await first.write([['pool-b', 0]]);
    expect(await second.read(['pool-a', 'pool-b'])).toEqual([4, 0]);

    // The first replica "crashes": it writes nothing more. Its count lapses; the second's stays.
    await eventually(
      async () => (await second.read(['pool-a']))[0] === 2,
      "the first replica's count lapses",
    );
    const fields = Object.keys(await redis.hgetall(`${prefix}pool-a`));
    expect(fields).toHaveLength(2);
    // A target written by nobody any more is gone from Redis after a lease.
    await eventually(async () => (await redis.exists(`${prefix}pool-b`)) === 0, 'the empty hash expires');
  });
});

describe('least-busy across two replicas', () => {
  let busy: FakeUpstream;
  let idle: FakeUpstream;
  let first: TestApp;
  let second: TestApp;
  let org: SeededOrganization;
  let user = 0;

  beforeAll(async () => {
    busy = await new FakeUpstream().start();
    idle = await new FakeUpstream().start();
    busy.setFallback({ text: ANSWER });
    idle.setFallback({ text: ANSWER });
    const env = { REDIS_URL, REDIS_KEY_PREFIX: `load-e2e-${process.pid}-${Date.now()}` };
    first = await startTestApp(env);
    second = await startTestApp(env, { reuse: first.database });
    // One model on two deployments; by weight alone nearly every call goes to the first.
    org = await first.seedOrganization('least-busy', {
      provider: 'openai-compatible',
      baseUrl: busy.url,
      model: 'pool-model',
      weight: 1000,
      fallbacks: [{ baseUrl: idle.url, model: 'pool-model', weight: 1 }],
      failover: { balance: 'least-busy' },
    });
  });
  afterAll(async () => {
    await second?.stop();
    await first?.close();
    await busy?.stop();
    await idle?.stop();
  });

  const turn = (app: TestApp) =>
    call(app.baseUrl, 'POST', '/v1/responses', {
      key: org.keys.full_access,
      body: { model: org.assistantId, input: 'count to ten' },
      headers: { 'x-user-id': `user-${++user}` },
    });

  it('sends a call on one replica to the deployment that is not busy with a call on the other', async () => {
    const sent = { busy: busy.requests.length, idle: idle.requests.length };
    // The first call is held before its first token, whichever deployment it goes to.
    busy.script({ text: ANSWER, firstTokenDelayMs: 3000 });
    idle.script({ text: ANSWER, firstTokenDelayMs: 3000 });
    const held = turn(first);
    await eventually(
      () => busy.requests.length + idle.requests.length > sent.busy + sent.idle,
      'the first call reaches a deployment',
    );
    const [taken, free] = busy.requests.length > sent.busy ? [busy, idle] : [idle, busy];
    const freeBefore = free.requests.length;

    const next = await turn(second);
    expect(next.status).toBe(200);
    expect(free.requests.length).toBe(freeBefore + 1);
    const firstReply = await held;
    expect(firstReply.status).toBe(200);
    // The held call was the only one on its deployment.
    expect(taken.requests.length).toBe((taken === busy ? sent.busy : sent.idle) + 1);
    busy.clearScripts();
    idle.clearScripts();
  });
});
