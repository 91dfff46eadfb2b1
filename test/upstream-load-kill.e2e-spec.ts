import { setTimeout as sleep } from 'node:timers/promises';
import { buildService, startService, type ServiceProcess } from './support/built-service.js';
import { FakeUpstream } from './support/fake-upstream.js';
import { call } from './support/http.js';
import { ANSWER } from './support/upstream-fault-scenarios.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

/**
 * A replica killed (SIGKILL: no shutdown, no last write) with least-busy calls in flight leaves
 * its running-call counts in Redis; they lapse within 5 s (docs/resilience.md,
 * "Fallback targets"), after which the survivor orders the pool as if the dead calls were gone.
 * The survivor runs in this process (on the embedded database it serves the database), the
 * replica killed is the built service in a process of its own.
 */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** The promise of docs/resilience.md: a dead replica's counts lapse within this (the lease). */
const LAPSE_MS = 5_000;

/** Polls (bounded) until `check` holds; the bound only ends a test that would hang. */
async function eventually(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await sleep(25);
  }
}

describe('least-busy counts of a killed replica', () => {
  let busy: FakeUpstream;
  let idle: FakeUpstream;
  let survivor: TestApp;
  let doomed: ServiceProcess | undefined;
  let org: SeededOrganization;
  let user = 0;

  beforeAll(async () => {
    const build = await buildService();
    busy = await new FakeUpstream().start();
    idle = await new FakeUpstream().start();
    busy.setFallback({ text: ANSWER });
    idle.setFallback({ text: ANSWER });
    const env = { REDIS_URL, REDIS_KEY_PREFIX: `load-kill-${process.pid}-${Date.now()}` };
    survivor = await startTestApp(env);
    // One model on two deployments; by weight alone nearly every call goes to `busy`.
    org = await survivor.seedOrganization('least-busy-kill', {
      provider: 'openai-compatible',
      baseUrl: busy.url,
      model: 'pool-model',
      weight: 1000,
      fallbacks: [{ baseUrl: idle.url, model: 'pool-model', weight: 1 }],
      failover: { balance: 'least-busy' },
    });
    doomed = await startService(build, { ...survivor.database.env, ...env, LOG_LEVEL: 'error' });
  }, 240_000);
  afterAll(async () => {
    doomed?.child.kill('SIGKILL');
    await survivor?.close();
    await busy?.stop();
    await idle?.stop();
  });

  const turn = (baseUrl: string) =>
    call(baseUrl, 'POST', '/v1/responses', {
      key: org.keys.full_access,
      body: { model: org.assistantId, input: 'count to ten' },
      headers: { 'x-user-id': `user-${++user}` },
    });

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
