import { setTimeout as sleep } from 'node:timers/promises';
import { OrganizationsService } from '../src/organizations/organizations.service.js';
import { TurnLedger } from '../src/responses/store/turn-ledger.repository.js';
import { UsageFlusher } from '../src/usage/usage-flusher.service.js';
import { FakeUpstream } from './support/fake-upstream.js';
import { call } from './support/http.js';
import { openStreamAtFirstDelta } from './support/sse.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';
import { scrapeMetrics, usageTokenCounts } from './support/metrics.js';

/**
 * A background turn ended from outside (cancelled, or swept from a replica that stopped renewing
 * its lease) after the upstream reported its tokens: the upstream billed them, so they are in the
 * usage report and the monthly budget like a stored turn's (docs/usage.md, "Ended turns").
 */
describe('usage of cancelled and swept turns', () => {
  let app: TestApp;
  let upstream: FakeUpstream;

  /** Three words and their usage chunk, then the stream stays open: the turn runs until ended. */
  const REPORTED_THEN_HELD = { text: 'one two three', omitFinish: true, holdOpen: true };

  async function seed(slug: string): Promise<SeededOrganization> {
    return app.seedOrganization(slug, {
      provider: 'openai-compatible',
      baseUrl: upstream.url,
      model: 'held-model',
      apiKeyEnv: 'UPSTREAM_TEST_KEY',
    });
  }

  /** Starts a background turn and waits until the upstream has sent its usage chunk. */
  async function startReported(org: SeededOrganization): Promise<string> {
    const before = upstream.requests.length;
    upstream.script(REPORTED_THEN_HELD);
    const created = await call(app.baseUrl, 'POST', '/v1/responses', {
      key: org.keys.full_access,
      body: { model: `asst_${org.assistantId}`, input: 'count me', background: true },
    });
    expect(created.status).toBe(200);
    await waitUntil(() => upstream.requests.length > before, 'the model call');
    // The fake writes every chunk at once; leave the service time to read them.
    await sleep(300);
    return created.body.id as string;
  }

  /** The organization's usage total once this replica flushed, polled while the turn's end settles. */
  async function totalOnceCounted(org: SeededOrganization): Promise<any> {
    let total: any;
    for (let attempt = 0; attempt < 50; attempt++) {
      await app.running.app.get(UsageFlusher).flush();
      const report = await call(app.baseUrl, 'GET', '/admin/v1/usage', { key: org.keys.admin });
      expect(report.status).toBe(200);
      total = report.body.total;
      if (total.turns > 0) return total;
      await sleep(50);
    }
    return total;
  }

  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    app = await startTestApp({
      UPSTREAM_TEST_KEY: 'sk-test',
      UPSTREAM_STALL_TIMEOUT_MS: '60000',
      TURN_LEASE_SECONDS: '2',
      TURN_LEASE_RENEW_MS: '100',
      TURN_SWEEP_MS: '200',
      BACKGROUND_EVENT_FLUSH_MS: '20',
    });
  });

  afterAll(async () => {
    await app?.close();
    await upstream?.stop();
  });

  it('counts the tokens a cancelled background turn was billed', async () => {
    const org = await seed('ended-cancel');
    await app.running.app.get(OrganizationsService).setMonthlyTokenBudget(org.id, 10);
    const id = await startReported(org);
    const cancelled = await call(app.baseUrl, 'POST', `/v1/responses/${id}/cancel`, {
      key: org.keys.full_access,
    });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ id, status: 'cancelled' });

    expect(await totalOnceCounted(org)).toMatchObject({
      turns: 1,
      input_tokens: 11,
      output_tokens: 3,
      total_tokens: 14,
    });
    // Once: cancelling again, and later flushes, add nothing.
    await call(app.baseUrl, 'POST', `/v1/responses/${id}/cancel`, { key: org.keys.full_access });
    await app.running.app.get(UsageFlusher).flush();
    const again = await call(app.baseUrl, 'GET', '/admin/v1/usage', { key: org.keys.admin });
    expect(again.body.total).toMatchObject({ turns: 1, input_tokens: 11, output_tokens: 3 });
    // And against the monthly budget: its 14 tokens spent the 10.
    const refused = await call(app.baseUrl, 'POST', '/v1/responses', {
      key: org.keys.full_access,
      body: { model: `asst_${org.assistantId}`, input: 'one more', background: true },
    });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'token_budget_exceeded' });
  });

  it('counts the tokens of a turn swept from a replica that stopped renewing its lease', async () => {
    const org = await seed('ended-swept');
    const abortedBefore = upstream.aborted;
    const id = await startReported(org);
    // As if its replica had stalled past its lease: the sweep fails the turn, and the replica,
    // finding the turn no longer its own at its next renewal, stops it knowing what it used.
    await app.dataSource.query(
      `UPDATE responses SET owner_id = 'stalled', lease_expires_at = now() - interval '1 second' WHERE id = $1`,
      [id.slice('resp_'.length)],
    );
    await waitUntil(async () => {
      const polled = await call(app.baseUrl, 'GET', `/v1/responses/${id}`, { key: org.keys.full_access });
      return polled.body.status === 'failed';
    }, 'the sweep');
    await waitUntil(() => upstream.aborted > abortedBefore, 'the model call to be aborted');

    expect(await totalOnceCounted(org)).toMatchObject({
      turns: 1,
      input_tokens: 11,
      output_tokens: 3,
      total_tokens: 14,
    });
  });

  it('counts the tokens of a foreground stream swept from its stalled replica', async () => {
    const org = await seed('ended-stream');
    upstream.script(REPORTED_THEN_HELD);
    const stream = await openStreamAtFirstDelta(app.baseUrl, org.keys.full_access, `asst_${org.assistantId}`);
    const id = /"id":"(resp_[^"]+)"/.exec(stream.raw())![1];
    await sleep(300);
    await app.dataSource.query(
      `UPDATE responses SET owner_id = 'stalled', lease_expires_at = now() - interval '1 second' WHERE id = $1`,
      [id.slice('resp_'.length)],
    );
    // The replica stops the turn at its next renewal, and its client's stream ends.
    await stream.rest();
    await waitUntil(async () => {
      const polled = await call(app.baseUrl, 'GET', `/v1/responses/${id}`, { key: org.keys.full_access });
      return polled.body.status === 'failed';
    }, 'the sweep');

    expect(await totalOnceCounted(org)).toMatchObject({ turns: 1, input_tokens: 11, output_tokens: 3 });
  });
});

/**
 * A turn that ends on its replica right after a cancel from another replica landed, before its
 * next lease renewal told it: its final write finds the row cancelled and stores nothing, so its
 * usage is stored as an ended turn's, once, and counted once in the budget and the metrics.
 */
describe('usage of a turn cancelled between its last event and its final write', () => {
  let app: TestApp;
  let upstream: FakeUpstream;

  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    // No renewal within the test: the replica learns of the cancel only from its final write.
    app = await startTestApp({
      UPSTREAM_TEST_KEY: 'sk-test',
      TURN_LEASE_SECONDS: '600',
      TURN_LEASE_RENEW_MS: '300000',
    });
  });

  afterAll(async () => {
    await app?.close();
    await upstream?.stop();
  });

  it('counts its tokens once in the report, the metrics and the budget; the row stays cancelled', async () => {
    const org = await app.seedOrganization('ended-final-write', {
      provider: 'openai-compatible',
      baseUrl: upstream.url,
      model: 'held-model',
      apiKeyEnv: 'UPSTREAM_TEST_KEY',
    });
    await app.running.app.get(OrganizationsService).setMonthlyTokenBudget(org.id, 14);
    let end!: () => void;
    const ended = new Promise<void>((resolve) => (end = resolve));
    upstream.script({ text: 'one two three', omitFinish: true, endAfter: ended });
    const created = await call(app.baseUrl, 'POST', '/v1/responses', {
      key: org.keys.full_access,
      body: { model: `asst_${org.assistantId}`, input: 'count me', background: true },
    });
    expect(created.status).toBe(200);
    const id = created.body.id as string;
    await waitUntil(() => upstream.requests.length > 0, 'the model call');
    // Another replica's cancel: the row only. Then the model's reply ends, and so does the turn.
    expect(await app.running.app.get(TurnLedger).cancel(org.id, id.slice('resp_'.length))).toBe(true);
    end();

    let total: any;
    await waitUntil(async () => {
      await app.running.app.get(UsageFlusher).flush();
      total = (await call(app.baseUrl, 'GET', '/admin/v1/usage', { key: org.keys.admin })).body.total;
      return total.turns > 0;
    }, 'the usage in the report');
    expect(total).toMatchObject({ turns: 1, input_tokens: 11, output_tokens: 3, total_tokens: 14 });
    const polled = await call(app.baseUrl, 'GET', `/v1/responses/${id}`, { key: org.keys.full_access });
    expect(polled.body.status).toBe('cancelled');

    const metrics = await scrapeMetrics(app.baseUrl);
    const counted = (type: string) => usageTokenCounts(metrics, { organization: org.id, type });
    expect([counted('input'), counted('output')]).toEqual([[11], [3]]);
    // Its 14 tokens spent the budget of 14.
    const refused = await call(app.baseUrl, 'POST', '/v1/responses', {
      key: org.keys.full_access,
      body: { model: `asst_${org.assistantId}`, input: 'one more', background: true },
    });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'token_budget_exceeded' });
  });
});

/** Waits (bounded) until `condition` holds; the bound is only ever reached by a failing test. */
async function waitUntil(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 0; !(await condition()); attempt++) {
    if (attempt > 500) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}
