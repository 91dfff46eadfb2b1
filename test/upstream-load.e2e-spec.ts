import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { RedisBusyStore } from '../src/llm/busy-store.js';
import { buildService, startService, type ServiceProcess } from './support/built-service.js';
import { FakeUpstream } from './support/fake-upstream.js';
import { ANSWER } from './support/upstream-fault-scenarios.js';
import { call } from './support/http.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

/**
 * Least-busy balancing across replicas (`failover.balance: least-busy`, docs/resilience.md): with
 * REDIS_URL (CI runs one) every replica counts its running calls per target in Redis under a
 * lease, and orders a pool by every replica's counts; a replica that stops renewing (it crashed)
 * has its counts lapse. Two clients of the counter, then two replicas of the service, then a
 * replica killed mid-call.
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

/** The promise of docs/resilience.md: a dead replica's counts lapse within this (the lease). */
const LAPSE_MS = 5_000;

/** Two fake deployments of one model, answering ANSWER unless scripted. */
async function twoDeployments(): Promise<{ busy: FakeUpstream; idle: FakeUpstream }> {
  const busy = await new FakeUpstream().start();
  const idle = await new FakeUpstream().start();
  busy.setFallback({ text: ANSWER });
  idle.setFallback({ text: ANSWER });
  return { busy, idle };
}

/** Seeds the least-busy assistant: one model on both; by weight alone nearly every call goes to `busy`. */
function seedPool(app: TestApp, slug: string, busy: FakeUpstream, idle: FakeUpstream) {
  return app.seedOrganization(slug, {
    provider: 'openai-compatible',
    baseUrl: busy.url,
    model: 'pool-model',
    weight: 1000,
    fallbacks: [{ baseUrl: idle.url, model: 'pool-model', weight: 1 }],
    failover: { balance: 'least-busy' },
  });
}

let users = 0;
/** A turn of the pool's assistant on the replica at `baseUrl`, as a user of its own. */
const poolTurn = (baseUrl: string, org: SeededOrganization) =>
  call(baseUrl, 'POST', '/v1/responses', {
    key: org.keys.full_access,
    body: { model: org.assistantId, input: 'count to ten' },
    headers: { 'x-user-id': `user-${++users}` },
  });

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

  beforeAll(async () => {
    ({ busy, idle } = await twoDeployments());
    const env = { REDIS_URL, REDIS_KEY_PREFIX: `load-e2e-${process.pid}-${Date.now()}` };
    first = await startTestApp(env);
    second = await startTestApp(env, { reuse: first.database });
    org = await seedPool(first, 'least-busy', busy, idle);
  });
  afterAll(async () => {
    await second?.stop();
    await first?.close();
    await busy?.stop();
    await idle?.stop();
  });

  const turn = (app: TestApp) => poolTurn(app.baseUrl, org);

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

/**
 * A replica killed (SIGKILL: no shutdown, no last write) with least-busy calls in flight leaves
 * its running-call counts in Redis; they lapse within 5 s (docs/resilience.md,
 * "Fallback targets"), after which the survivor orders the pool as if the dead calls were gone.
 * The survivor runs in this process (on the embedded database it serves the database), the
 * replica killed is the built service in a process of its own.
 */
describe('least-busy counts of a killed replica', () => {
  let busy: FakeUpstream;
  let idle: FakeUpstream;
  let survivor: TestApp;
  let doomed: ServiceProcess | undefined;
  let org: SeededOrganization;

  beforeAll(async () => {
    const build = await buildService();
    ({ busy, idle } = await twoDeployments());
    const env = { REDIS_URL, REDIS_KEY_PREFIX: `load-kill-${process.pid}-${Date.now()}` };
    survivor = await startTestApp(env);
    org = await seedPool(survivor, 'least-busy-kill', busy, idle);
    doomed = await startService(build, { ...survivor.database.env, ...env, LOG_LEVEL: 'error' });
  }, 240_000);
  afterAll(async () => {
    doomed?.child.kill('SIGKILL');
    await survivor?.close();
    await busy?.stop();
    await idle?.stop();
  });

  const turn = (baseUrl: string) => poolTurn(baseUrl, org);

  it('lets its counts lapse within 5 s: the survivor then balances as if the dead calls were gone', async () => {
    const before = { busy: busy.requests.length, idle: idle.requests.length };
    // The doomed replica's call never answers: it is in flight when the replica dies.
    busy.script({ hang: true });
    idle.script({ hang: true });
    void turn(doomed!.baseUrl).catch(() => undefined);
    await eventually(
      () => busy.requests.length + idle.requests.length > before.busy + before.idle,
      "the doomed replica's call reaches a deployment",
    );
    busy.clearScripts();
    idle.clearScripts();
    // `busy` but for one time in a thousand (weights); then the check after the kill below is
    // met by the weights alone, and this test proves less, never fails.
    const free = busy.requests.length > before.busy ? idle : busy;

    // While it lives, its call counts on the survivor, also past a lease (its heartbeat renews
    // it): the survivor's call goes to the other deployment.
    await sleep(LAPSE_MS + 500);
    const freeBefore = free.requests.length;
    expect((await turn(survivor.baseUrl)).status).toBe(200);
    expect(free.requests.length).toBe(freeBefore + 1);

    doomed!.child.kill('SIGKILL');
    await doomed!.exit;
    const killedAt = Date.now();
    doomed = undefined;

    // Within the lease of its last heartbeat, its count is gone: the pool is ordered by weight
    // again (as if idle), so the survivor's call goes to `busy`, whichever deployment held the dead call.
    await sleep(Math.max(0, killedAt + LAPSE_MS - Date.now()));
    const busyBefore = busy.requests.length;
    expect((await turn(survivor.baseUrl)).status).toBe(200);
    expect(busy.requests.length).toBe(busyBefore + 1);
  });
});
