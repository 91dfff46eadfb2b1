import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { getDataSourceToken } from '@nestjs/typeorm';
import OpenAI from 'openai';
import type { DataSource } from 'typeorm';
import { ApiKeysService } from '../src/api-keys/api-keys.service.js';
import { AssistantsService } from '../src/assistants/assistants.service.js';
import { createApp, type RunningApp } from '../src/bootstrap/create-app.js';
import { loadConfig } from '../src/config/app-config.js';
import { shutDownGracefully } from '../src/lifecycle/graceful-shutdown.js';
import { TurnLedger } from '../src/responses/store/turn-ledger.repository.js';
import { OrganizationsService } from '../src/organizations/organizations.service.js';
import { FakeUpstream } from './support/fake-upstream.js';
import { call } from './support/http.js';
import { parseSse } from './support/sse.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';

/** Short leases so lost turns are noticed in a test's time; the renewal keeps its ratio. */
const DURABLE_ENV = {
  TURN_LEASE_SECONDS: '2',
  TURN_LEASE_RENEW_MS: '100',
  TURN_SWEEP_MS: '200',
  BACKGROUND_EVENT_FLUSH_MS: '20',
  RESUME_POLL_MS: '20',
};

interface Replica {
  baseUrl: string;
  running: RunningApp;
  dataSource: DataSource;
}

async function startReplica(database: TestDatabase, env: Record<string, string>): Promise<Replica> {
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    QUICKSTART: 'false',
    METRICS_PUBLIC: 'true',
    ...database.env,
    ...DURABLE_ENV,
    ...env,
  });
  const running = await createApp(config, { logger: false });
  await running.app.listen(0, '127.0.0.1');
  const { port } = running.app.getHttpServer().address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}`, running, dataSource: running.app.get(getDataSourceToken()) };
}

interface Tenant {
  key: string;
  assistantId: string;
}

async function seedTenant(replica: Replica, slug: string, model: unknown): Promise<Tenant> {
  const app = replica.running.app;
  const organization = await app.get(OrganizationsService).create({ slug });
  const assistant = await app.get(AssistantsService).create(organization.id, { name: slug, model });
  const { secret } = await app.get(ApiKeysService).create(organization.id, 'test', ['full_access']);
  return { key: secret, assistantId: assistant.id };
}

/** An offline model that streams `words` words, `delayMs` apart. */
function slowModel(words: number, delayMs: number): unknown {
  const reply = Array.from({ length: words }, (_, i) => `word${i}`).join(' ');
  return { provider: 'offline', tokenDelayMs: delayMs, script: [{ match: '.', reply }] };
}

/** Polls a response until `done` says so (each poll is a real GET, as a client would). */
async function pollUntil(
  replica: Replica,
  key: string,
  id: string,
  done: (body: any) => boolean,
  headers: Record<string, string> = {},
): Promise<any> {
  for (let attempt = 0; attempt < 1000; attempt++) {
    const reply = await call(replica.baseUrl, 'GET', `/v1/responses/${id}`, { key, headers });
    expect(reply.status).toBe(200);
    if (done(reply.body)) return reply.body;
    await sleep(20);
  }
  throw new Error(`response ${id} never reached the expected state`);
}

/** A sample of `/metrics` (a labelled one as `name{label="value"}`), 0 when absent. */
async function metric(replica: Replica, series: string): Promise<number> {
  const text = (await call(replica.baseUrl, 'GET', '/metrics')).body as string;
  const escaped = series.replace(/[{}"]/g, (char) => `\\${char}`);
  return Number(new RegExp(`^${escaped} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
}

/** Waits (bounded) until a sample of `/metrics` has the value `expected`. */
async function waitForMetric(replica: Replica, series: string, expected: number): Promise<void> {
  for (let attempt = 0; attempt < 1500; attempt++) {
    if ((await metric(replica, series)) === expected) return;
    await sleep(20);
  }
  throw new Error(`${series} never reached ${expected} (it is ${await metric(replica, series)})`);
}

/** Waits (bounded) until `condition` holds; the bound is only ever reached by a failing test. */
async function waitUntil(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 0; !(await condition()); attempt++) {
    if (attempt > 1000) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** A long answer of the fake upstream: 400 tokens 20 ms apart, 8 s unless its call is aborted. */
const LONG_ANSWER = { text: Array.from({ length: 400 }, (_, i) => `t${i}`).join(' '), tokenDelayMs: 20 };

/** Reads an SSE body until `stop` says so (then aborts), or to its end. Returns whole events only. */
async function readStream(
  res: Response,
  controller: AbortController,
  stop: (raw: string) => boolean = () => false,
): Promise<string> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let raw = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    raw += decoder.decode(value, { stream: true });
    if (stop(raw)) {
      controller.abort();
      break;
    }
  }
  return raw;
}

function openStream(replica: Replica, key: string, path: string, init: RequestInit = {}) {
  const controller = new AbortController();
  const res = fetch(`${replica.baseUrl}${path}`, {
    ...init,
    headers: { 'content-type': 'application/json', 'x-api-key': key, ...(init.headers ?? {}) },
    signal: controller.signal,
  });
  return { controller, res };
}

const eventBlocks = (raw: string) => raw.split('\n\n').filter((block) => block.startsWith('event: '));

describe('durable turns: background responses, resumable streams, cancel, leases (two replicas, one database)', () => {
  let database: TestDatabase;
  let upstream: FakeUpstream;
  let a: Replica;
  let b: Replica;
  let slow: Tenant;
  let other: Tenant;
  let remote: Tenant;
  /** Runs for seconds: still running when a test acts on it mid-turn. */
  let lengthy: Tenant;
  /** 200 words as fast as they go. */
  let batched: Tenant;

  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    database = await createTestDatabase();
    // One after the other: on the embedded database the first replica serves it to the second.
    a = await startReplica(database, { UPSTREAM_TEST_KEY: 'sk-test' });
    b = await startReplica(database, { UPSTREAM_TEST_KEY: 'sk-test' });
    slow = await seedTenant(a, 'slow', slowModel(30, 15));
    other = await seedTenant(a, 'other', slowModel(3, 0));
    lengthy = await seedTenant(a, 'lengthy', slowModel(250, 20));
    batched = await seedTenant(a, 'batched', slowModel(200, 0));
    remote = await seedTenant(a, 'remote', {
      provider: 'openai-compatible',
      baseUrl: upstream.url,
      model: 'gpt-test',
      apiKeyEnv: 'UPSTREAM_TEST_KEY',
    });
  });
  afterAll(async () => {
    await b?.running.close().catch(() => undefined);
    await a?.running.close().catch(() => undefined);
    await database?.drop();
    await upstream?.stop();
  });

  it('runs a background turn with no client connected; polling on another replica sees it completed', async () => {
    const created = await call(a.baseUrl, 'POST', '/v1/responses', {
      key: slow.key,
      headers: { 'x-user-id': 'u-poll' },
      body: { model: slow.assistantId, input: 'write slowly', background: true },
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ status: 'queued', background: true, output: [] });

    const done = await pollUntil(b, slow.key, created.body.id, (body) => body.status === 'completed', {
      'x-user-id': 'u-poll',
    });
    expect(done).toMatchObject({ id: created.body.id, background: true, status: 'completed' });
    expect(done.output_text).toBe(Array.from({ length: 30 }, (_, i) => `word${i}`).join(' '));

    const history = await call(
      b.baseUrl,
      'GET',
      `/v1/chat/history/conversations/${done.conversation.id}/messages`,
      {
        key: slow.key,
        headers: { 'x-user-id': 'u-poll' },
      },
    );
    expect(history.status).toBe(200);
    const texts = JSON.stringify(history.body);
    expect(texts).toContain('write slowly');
    expect(texts).toContain('word29');
  });

  it('resumes a dropped stream on the other replica: the two parts are the uninterrupted stream, byte for byte', async () => {
    const first = openStream(a, slow.key, '/v1/responses', {
      method: 'POST',
      body: JSON.stringify({
        model: slow.assistantId,
        input: 'stream slowly',
        background: true,
        stream: true,
      }),
    });
    const res = await first.res;
    expect(res.status).toBe(200);
    // The client drops after 6 whole events.
    const partRaw = await readStream(res, first.controller, (raw) => eventBlocks(raw).length >= 7);
    const part = eventBlocks(partRaw).slice(0, 6);
    const parsed = part.map((block) => parseSse(`${block}\n\n`).events[0].json);
    expect(parsed.map((event) => event.sequence_number)).toEqual([0, 1, 2, 3, 4, 5]);
    const id = parsed[0].response.id as string;
    expect(parsed[0]).toMatchObject({ type: 'response.created', response: { background: true } });

    const resumed = openStream(b, slow.key, `/v1/responses/${id}?stream=true&starting_after=5`);
    const resumedRes = await resumed.res;
    expect(resumedRes.status).toBe(200);
    expect(resumedRes.headers.get('content-type')).toContain('text/event-stream');
    const rest = await readStream(resumedRes, resumed.controller);
    expect(rest.endsWith('data: [DONE]\n\n')).toBe(true);

    // The whole stream, replayed after the turn ended, is the uninterrupted one.
    const whole = openStream(b, slow.key, `/v1/responses/${id}?stream=true`);
    const wholeRaw = await readStream(await whole.res, whole.controller);
    expect(part.map((block) => `${block}\n\n`).join('') + rest).toBe(wholeRaw);
    const events = parseSse(wholeRaw).events.filter((event) => event.json?.type);
    expect(events.map((event) => event.json.sequence_number)).toEqual(events.map((_, index) => index));
    expect(events[events.length - 1].json).toMatchObject({
      type: 'response.completed',
      response: { id, status: 'completed' },
    });
    const stored = await call(a.baseUrl, 'GET', `/v1/responses/${id}`, { key: slow.key });
    expect(events[events.length - 1].json.response.output).toEqual(stored.body.output);
  });

  it('stores a finished background turn as a few rows, one per flush, and resumes from inside a batch with exactly the events after it', async () => {
    const created = await call(a.baseUrl, 'POST', '/v1/responses', {
      key: batched.key,
      body: { model: batched.assistantId, input: 'many words', background: true },
    });
    expect(created.status).toBe(200);
    const id = created.body.id as string;
    await pollUntil(b, batched.key, id, (body) => body.status === 'completed');

    const whole = openStream(b, batched.key, `/v1/responses/${id}?stream=true`);
    const wholeRaw = await readStream(await whole.res, whole.controller);
    const blocks = eventBlocks(wholeRaw);
    expect(blocks.length).toBeGreaterThan(200);

    // At rest: one row per flush, its events in order, not one row per event.
    const uuid = id.replace(/^resp_/, '');
    const rows: { first_sequence: number; last_sequence: number; sequences: number[] }[] =
      await a.dataSource.query(
        `SELECT first_sequence, last_sequence,
                (SELECT array_agg((e->>'sequence_number')::int) FROM json_array_elements(events) e) AS sequences
           FROM response_event_batches WHERE response_id = $1 ORDER BY first_sequence`,
        [uuid],
      );
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.length * 10).toBeLessThan(blocks.length);
    expect(rows.flatMap((row) => row.sequences)).toEqual(blocks.map((_, index) => index));
    for (const row of rows) {
      expect([row.first_sequence, row.last_sequence]).toEqual([row.sequences[0], row.sequences.at(-1)]);
    }

    // From the middle of the largest batch: exactly the events after it, as first sent.
    const largest = rows.reduce((best, row) => (row.sequences.length > best.sequences.length ? row : best));
    expect(largest.sequences.length).toBeGreaterThan(2);
    const after = largest.sequences[1];
    const resumed = openStream(b, batched.key, `/v1/responses/${id}?stream=true&starting_after=${after}`);
    const rest = await readStream(await resumed.res, resumed.controller);
    expect(eventBlocks(rest)).toEqual(blocks.slice(after + 1));
    expect(rest.endsWith('data: [DONE]\n\n')).toBe(true);

    // Retention follows the response's completion time: kept within it, deleted after it.
    const ledger = a.running.app.get(TurnLedger);
    const remaining = async () =>
      Number(
        (
          await a.dataSource.query(
            'SELECT count(*) AS n FROM response_event_batches WHERE response_id = $1',
            [uuid],
          )
        )[0].n,
      );
    await ledger.deleteExpiredEvents(3_600_000);
    expect(await remaining()).toBe(rows.length);
    await a.dataSource.query(`UPDATE responses SET completed_at = now() - interval '2 hours' WHERE id = $1`, [
      uuid,
    ]);
    await ledger.deleteExpiredEvents(3_600_000);
    expect(await remaining()).toBe(0);
  });

  it('resumes from the per-event rows a replica of the previous release stored (a rolling upgrade)', async () => {
    const finished = async (tenant: Tenant, input: string) => {
      const created = await call(a.baseUrl, 'POST', '/v1/responses', {
        key: tenant.key,
        body: { model: tenant.assistantId, input, background: true },
      });
      expect(created.status).toBe(200);
      const id = created.body.id as string;
      await pollUntil(b, tenant.key, id, (body) => body.status === 'completed');
      return id;
    };
    const replay = async (tenant: Tenant, id: string, after?: number) => {
      const query = after === undefined ? '' : `&starting_after=${after}`;
      const stream = openStream(b, tenant.key, `/v1/responses/${id}?stream=true${query}`);
      return readStream(await stream.res, stream.controller);
    };

    // The previous release wrote one row per event (a rolling upgrade: it still runs beside this one).
    const id = await finished(batched, 'legacy rows');
    const uuid = id.replace(/^resp_/, '');
    const blocks = eventBlocks(await replay(batched, id));
    await a.dataSource.query(
      `INSERT INTO response_events (response_id, sequence_number, event_type, data)
       SELECT b.response_id, b.first_sequence + e.n::int - 1, e.value->>'type', e.value::text
         FROM response_event_batches b CROSS JOIN LATERAL json_array_elements(b.events) WITH ORDINALITY AS e(value, n)
        WHERE b.response_id = $1`,
      [uuid],
    );
    await a.dataSource.query('DELETE FROM response_event_batches WHERE response_id = $1', [uuid]);
    expect(eventBlocks(await replay(batched, id))).toEqual(blocks);
    expect(eventBlocks(await replay(batched, id, 5))).toEqual(blocks.slice(6));
  });

  it('cancels a running background turn from the other replica: the upstream call is aborted', async () => {
    const abortedBefore = upstream.aborted;
    upstream.script({ text: Array.from({ length: 400 }, (_, i) => `t${i}`).join(' '), tokenDelayMs: 20 });
    const requestsBefore = upstream.requests.length;
    const created = await call(a.baseUrl, 'POST', '/v1/responses', {
      key: remote.key,
      body: { model: remote.assistantId, input: 'a long answer', background: true },
    });
    expect(created.status).toBe(200);
    const id = created.body.id as string;
    await pollUntil(a, remote.key, id, (body) => body.status === 'in_progress');
    while (upstream.requests.length === requestsBefore) await sleep(10);
    // The first batch of events is stored (they are flushed in batches), so the replay below has them.
    const uuid = id.replace(/^resp_/, '');
    const storedEvents = async () =>
      Number(
        (
          await a.dataSource.query(
            'SELECT count(*) AS n FROM response_event_batches WHERE response_id = $1',
            [uuid],
          )
        )[0].n,
      );
    while ((await storedEvents()) === 0) await sleep(20);

    const cancelled = await call(b.baseUrl, 'POST', `/v1/responses/${id}/cancel`, { key: remote.key });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ id, status: 'cancelled', background: true });
    // The replica running it notices (its next lease renewal) and aborts the upstream call.
    while (upstream.aborted === abortedBefore) await sleep(10);
    expect(upstream.aborted).toBe(abortedBefore + 1);

    const again = await call(a.baseUrl, 'POST', `/v1/responses/${id}/cancel`, { key: remote.key });
    expect(again.status).toBe(200);
    expect(again.body.status).toBe('cancelled');
    const polled = await call(a.baseUrl, 'GET', `/v1/responses/${id}`, { key: remote.key });
    expect(polled.body.status).toBe('cancelled');

    // Its stream ends with an error naming the cancellation, after what was stored.
    const replay = openStream(b, remote.key, `/v1/responses/${id}?stream=true`);
    const events = parseSse(await readStream(await replay.res, replay.controller)).events;
    expect(events[0].json.type).toBe('response.created');
    expect(events[events.length - 1].json).toMatchObject({
      type: 'response.error',
      sequence_number: events.length - 1,
      error: { code: 'response_cancelled' },
    });
  });

  it('cancels on the replica running the turn at once, and answers a finished response with its final state', async () => {
    const abortedBefore = upstream.aborted;
    const requestsBefore = upstream.requests.length;
    upstream.script(LONG_ANSWER);
    const created = await call(a.baseUrl, 'POST', '/v1/responses', {
      key: remote.key,
      body: { model: remote.assistantId, input: 'cancel me here', background: true },
    });
    const id = created.body.id as string;
    await pollUntil(a, remote.key, id, (body) => body.status === 'in_progress');
    await waitUntil(() => upstream.requests.length > requestsBefore, 'the model call to start');
    const cancelled = await call(a.baseUrl, 'POST', `/v1/responses/${id}/cancel`, { key: remote.key });
    expect(cancelled.body.status).toBe('cancelled');
    // Generation stopped there: the model call was aborted (left alone, it ends after 8 s without
    // an abort), the replica's run ended, and the response stays cancelled.
    await waitUntil(() => upstream.aborted === abortedBefore + 1, 'the model call to be aborted');
    await waitForMetric(a, 'switchboard_background_responses{state="running"}', 0);
    expect(upstream.aborted).toBe(abortedBefore + 1);
    expect((await call(b.baseUrl, 'GET', `/v1/responses/${id}`, { key: remote.key })).body.status).toBe(
      'cancelled',
    );

    const finished = await call(a.baseUrl, 'POST', '/v1/responses', {
      key: other.key,
      body: { model: other.assistantId, input: 'quick', background: true },
    });
    const completed = await pollUntil(b, other.key, finished.body.id, (body) => body.status === 'completed');
    const late = await call(b.baseUrl, 'POST', `/v1/responses/${finished.body.id}/cancel`, {
      key: other.key,
    });
    expect(late.status).toBe(200);
    expect(late.body).toEqual(completed);
  });

  it('refuses to cancel or stream again a response that was not created in the background', async () => {
    const plain = await call(a.baseUrl, 'POST', '/v1/responses', {
      key: other.key,
      body: { model: other.assistantId, input: 'foreground' },
    });
    expect(plain.body.background).toBe(false);
    for (const [method, path] of [
      ['POST', `/v1/responses/${plain.body.id}/cancel`],
      ['GET', `/v1/responses/${plain.body.id}?stream=true`],
    ]) {
      const reply = await call(b.baseUrl, method, path, { key: other.key });
      expect(reply.status).toBe(400);
      expect(reply.body.error.code).toBe('invalid_request');
    }
    const badCursor = await call(
      b.baseUrl,
      'GET',
      `/v1/responses/${plain.body.id}?stream=true&starting_after=x`,
      {
        key: other.key,
      },
    );
    expect(badCursor.status).toBe(400);
    const refused = await call(a.baseUrl, 'POST', '/v1/responses', {
      key: other.key,
      body: { model: other.assistantId, input: 'x', background: true, store: false },
    });
    expect(refused.status).toBe(400);
  });

  it('keeps cancel and resumed streams to the organization and the user that own the response', async () => {
    const created = await call(a.baseUrl, 'POST', '/v1/responses', {
      key: other.key,
      headers: { 'x-user-id': 'alice' },
      body: { model: other.assistantId, input: 'mine', background: true },
    });
    const id = created.body.id as string;
    await pollUntil(a, other.key, id, (body) => body.status === 'completed', { 'x-user-id': 'alice' });
    const attempts: [string, Record<string, string>][] = [
      [slow.key, { 'x-user-id': 'alice' }], // another organization
      [other.key, { 'x-user-id': 'mallory' }], // another user
      [other.key, {}], // anonymous
    ];
    for (const [key, headers] of attempts) {
      for (const [method, path] of [
        ['POST', `/v1/responses/${id}/cancel`],
        ['GET', `/v1/responses/${id}?stream=true`],
        ['GET', `/v1/responses/${id}`],
      ]) {
        const reply = await call(b.baseUrl, method, path, { key, headers });
        expect(reply.status).toBe(404);
        expect(reply.body.error.code).toBe('response_not_found');
      }
    }
    const own = await call(b.baseUrl, 'GET', `/v1/responses/${id}?stream=true&starting_after=0`, {
      key: other.key,
      headers: { 'x-user-id': 'alice' },
    });
    expect(own.status).toBe(200);
    expect(parseSse(own.body as string).events[0].json.sequence_number).toBe(1);
  });

  it('records a foreground turn when it starts: its id answers and its user message is in history mid-stream', async () => {
    const stream = openStream(a, lengthy.key, '/v1/responses', {
      method: 'POST',
      headers: { 'x-user-id': 'u-fg' },
      body: JSON.stringify({ model: lengthy.assistantId, input: 'foreground in flight', stream: true }),
    });
    const res = await stream.res;
    const reader = res.body!.getReader();
    let raw = '';
    while (!raw.includes('response.output_text.delta'))
      raw += new TextDecoder().decode((await reader.read()).value);
    const created = parseSse(raw).events[0].json.response;
    const running = await call(b.baseUrl, 'GET', `/v1/responses/${created.id}`, {
      key: lengthy.key,
      headers: { 'x-user-id': 'u-fg' },
    });
    expect(running.status).toBe(200);
    expect(running.body).toMatchObject({ id: created.id, status: 'in_progress', background: false });
    const history = await call(
      b.baseUrl,
      'GET',
      `/v1/chat/history/conversations/${created.conversation.id}/messages`,
      {
        key: lengthy.key,
        headers: { 'x-user-id': 'u-fg' },
      },
    );
    expect(JSON.stringify(history.body)).toContain('foreground in flight');
    while (!(await reader.read()).done);
    const finished = await call(b.baseUrl, 'GET', `/v1/responses/${created.id}`, {
      key: lengthy.key,
      headers: { 'x-user-id': 'u-fg' },
    });
    expect(finished.body.status).toBe('completed');
    const after = await call(
      b.baseUrl,
      'GET',
      `/v1/chat/history/conversations/${created.conversation.id}/messages`,
      {
        key: lengthy.key,
        headers: { 'x-user-id': 'u-fg' },
      },
    );
    const text = JSON.stringify(after.body);
    expect(text.split('foreground in flight').length).toBe(2);
    expect(text).toContain('word29');
  });

  it('fails a turn whose replica stopped renewing its lease, with a clear error, and stops it there', async () => {
    const abortedBefore = upstream.aborted;
    const requestsBefore = upstream.requests.length;
    upstream.script(LONG_ANSWER);
    const created = await call(a.baseUrl, 'POST', '/v1/responses', {
      key: remote.key,
      body: { model: remote.assistantId, input: 'orphan me', background: true },
    });
    const id = created.body.id as string;
    const expiries = async () =>
      (await metric(a, 'switchboard_turn_lease_expiries_total')) +
      (await metric(b, 'switchboard_turn_lease_expiries_total'));
    const expiriesBefore = await expiries();
    await pollUntil(a, remote.key, id, (body) => body.status === 'in_progress');
    await waitUntil(() => upstream.requests.length > requestsBefore, 'the model call to start');
    // As if its replica had vanished: another owner, whose lease ran out.
    await a.dataSource.query(
      `UPDATE responses SET owner_id = 'vanished', lease_expires_at = now() - interval '1 second' WHERE id = $1`,
      [id.slice('resp_'.length)],
    );
    const failed = await pollUntil(b, remote.key, id, (body) => body.status !== 'in_progress');
    expect(failed).toMatchObject({
      status: 'failed',
      error: { code: 'response_interrupted', type: 'server_error' },
    });
    // Either replica's sweeper may have found it first; it was counted once.
    expect((await expiries()) - expiriesBefore).toBe(1);
    // Replica a, which still ran it, lost the lease at its next renewal and stopped: the model
    // call was aborted, its run ended, and the response stays failed.
    await waitUntil(() => upstream.aborted === abortedBefore + 1, 'the model call to be aborted');
    await waitForMetric(a, 'switchboard_background_responses{state="running"}', 0);
    expect((await call(b.baseUrl, 'GET', `/v1/responses/${id}`, { key: remote.key })).body.status).toBe(
      'failed',
    );
  });

  it('runs BACKGROUND_MAX_RUNNING turns at once, queues BACKGROUND_MAX_QUEUED more, and refuses the rest', async () => {
    const narrow = await startReplica(database, { BACKGROUND_MAX_RUNNING: '1', BACKGROUND_MAX_QUEUED: '1' });
    // The first runs until it is cancelled (1,000 words 50 ms apart), so the counts below hold
    // for as long as a busy machine needs to read them.
    const held = await seedTenant(a, 'held', slowModel(1000, 50));
    const queued = await seedTenant(a, 'queued', slowModel(3, 0));
    try {
      const post = (tenant: Tenant, input: string) =>
        call(narrow.baseUrl, 'POST', '/v1/responses', {
          key: tenant.key,
          body: { model: tenant.assistantId, input, background: true },
        });
      const first = await post(held, 'first');
      const second = await post(queued, 'second');
      const third = await post(queued, 'third');
      expect([first.status, second.status]).toEqual([200, 200]);
      expect(third.status).toBe(503);
      expect(third.body.error.code).toBe('service_overloaded');
      expect(third.headers.get('retry-after')).toBe('1');
      await waitForMetric(narrow, 'switchboard_background_responses{state="running"}', 1);
      expect(await metric(narrow, 'switchboard_background_responses{state="queued"}')).toBe(1);
      expect(
        (await call(b.baseUrl, 'GET', `/v1/responses/${second.body.id}`, { key: queued.key })).body.status,
      ).toBe('queued');
      // The first cancelled, the queued one runs and completes.
      await call(narrow.baseUrl, 'POST', `/v1/responses/${first.body.id}/cancel`, { key: held.key });
      await pollUntil(b, queued.key, second.body.id, (body) => body.status === 'completed');
      await waitForMetric(narrow, 'switchboard_background_responses{state="running"}', 0);
      expect(await metric(narrow, 'switchboard_background_responses{state="queued"}')).toBe(0);
    } finally {
      await narrow.running.close();
    }
  });

  it('finishes background turns within the grace period of a replica that shuts down, and fails those it cuts', async () => {
    const finishing = await startReplica(database, {});
    const created = await call(finishing.baseUrl, 'POST', '/v1/responses', {
      key: slow.key,
      body: { model: slow.assistantId, input: 'finish before you leave', background: true },
    });
    await shutDownGracefully(finishing.running, { shutdownDelayMs: 0, shutdownGraceMs: 30_000 });
    const finished = await call(a.baseUrl, 'GET', `/v1/responses/${created.body.id}`, { key: slow.key });
    expect(finished.body).toMatchObject({
      status: 'completed',
      output_text: expect.stringContaining('word29'),
    });

    const cutting = await startReplica(database, {});
    const long = await seedTenant(a, 'long', slowModel(2000, 20));
    const cut = await call(cutting.baseUrl, 'POST', '/v1/responses', {
      key: long.key,
      body: { model: long.assistantId, input: 'too long to finish', background: true },
    });
    await pollUntil(a, long.key, cut.body.id, (body) => body.status === 'in_progress');
    await shutDownGracefully(cutting.running, { shutdownDelayMs: 0, shutdownGraceMs: 100 });
    const failed = await call(a.baseUrl, 'GET', `/v1/responses/${cut.body.id}`, { key: long.key });
    expect(failed.body).toMatchObject({ status: 'failed', error: { code: 'service_overloaded' } });
  });

  it('works with the official SDK: retrieve with stream and starting_after, the stream helper resume, cancel', async () => {
    const client = new OpenAI({ apiKey: slow.key, baseURL: `${b.baseUrl}/v1`, maxRetries: 0 });
    const created = await client.responses.create({
      model: slow.assistantId,
      input: 'sdk',
      background: true,
    });
    expect(created.status).toBe('queued');

    const retrieved = await client.responses.retrieve(created.id, { stream: true, starting_after: 2 });
    const numbers: number[] = [];
    for await (const event of retrieved) numbers.push(event.sequence_number);
    expect(numbers[0]).toBe(3);
    expect(numbers).toEqual(numbers.map((_, index) => index + 3));

    const resumed = client.responses.stream({ response_id: created.id, starting_after: 0 } as never);
    const final = await resumed.finalResponse();
    expect(final).toMatchObject({ id: created.id, status: 'completed' });
    expect(final.output_text).toContain('word29');

    // Created through one replica, cancelled through the other.
    const running = await new OpenAI({
      apiKey: lengthy.key,
      baseURL: `${b.baseUrl}/v1`,
      maxRetries: 0,
    }).responses.create({ model: lengthy.assistantId, input: 'sdk cancel', background: true });
    const cancelled = await new OpenAI({
      apiKey: lengthy.key,
      baseURL: `${a.baseUrl}/v1`,
      maxRetries: 0,
    }).responses.cancel(running.id);
    expect(cancelled.status).toBe('cancelled');
  });
});
