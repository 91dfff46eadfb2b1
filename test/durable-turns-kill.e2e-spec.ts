import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { ApiKeysService } from '../src/api-keys/api-keys.service.js';
import { AssistantsService } from '../src/assistants/assistants.service.js';
import { createApp, type RunningApp } from '../src/bootstrap/create-app.js';
import { loadConfig } from '../src/config/app-config.js';
import { OrganizationsService } from '../src/organizations/organizations.service.js';
import {
  buildService,
  startService,
  type ServiceBuild,
  type ServiceProcess,
} from './support/built-service.js';
import { call } from './support/http.js';
import { parseSse } from './support/sse.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';

const LEASE_SECONDS = 2;
const SWEEP_MS = 200;
const DURABLE_ENV = {
  TURN_LEASE_SECONDS: String(LEASE_SECONDS),
  TURN_LEASE_RENEW_MS: '100',
  TURN_SWEEP_MS: String(SWEEP_MS),
  BACKGROUND_EVENT_FLUSH_MS: '20',
  RESUME_POLL_MS: '20',
};
/** The documented bound (docs/operations.md): lease + sweep interval; the slack covers a busy CI machine. */
const BOUND_MS = LEASE_SECONDS * 1000 + SWEEP_MS;
const SLACK_MS = 5000;

function slowModel(words: number, delayMs: number): unknown {
  const reply = Array.from({ length: words }, (_, i) => `word${i}`).join(' ');
  return { provider: 'offline', tokenDelayMs: delayMs, script: [{ match: '.', reply }] };
}

// Several replicas need a database server: a killed process that owns an embedded database takes
// the database with it, so these run only with DATABASE_URL (CI runs them on PostgreSQL).
const onServer = process.env.DATABASE_URL ? describe : describe.skip;

onServer('a replica killed with kill -9 (child process, PostgreSQL)', () => {
  let database: TestDatabase;
  let build: ServiceBuild;
  let survivor: { baseUrl: string; running: RunningApp };
  let victim: ServiceProcess | undefined;
  let key: string;
  let assistantId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    build = await buildService();
    const running = await createApp(
      loadConfig({ PORT: '0', HOST: '127.0.0.1', QUICKSTART: 'false', ...database.env, ...DURABLE_ENV }),
      { logger: false },
    );
    await running.app.listen(0, '127.0.0.1');
    const { port } = running.app.getHttpServer().address() as AddressInfo;
    survivor = { baseUrl: `http://127.0.0.1:${port}`, running };
    const organization = await running.app.get(OrganizationsService).create({ slug: 'killed' });
    assistantId = (
      await running.app
        .get(AssistantsService)
        .create(organization.id, { name: 'slow', model: slowModel(400, 10) })
    ).id;
    key = (await running.app.get(ApiKeysService).create(organization.id, 'k', ['full_access'])).secret;
  }, 180_000);

  beforeEach(async () => {
    victim = await startService(build, { ...database.env, ...DURABLE_ENV });
  });
  afterEach(() => {
    if (victim && victim.child.exitCode === null) victim.child.kill('SIGKILL');
  });
  afterAll(async () => {
    await survivor?.running.close();
    await database?.drop();
  });

  async function kill(service: ServiceProcess): Promise<number> {
    service.child.kill('SIGKILL');
    await service.exit;
    return Date.now();
  }

  /** Polls on the surviving replica until the response leaves in_progress, within the bound. */
  async function settled(id: string, killedAt: number, headers: Record<string, string> = {}): Promise<any> {
    while (Date.now() - killedAt < BOUND_MS + SLACK_MS) {
      const reply = await call(survivor.baseUrl, 'GET', `/v1/responses/${id}`, { key, headers });
      expect(reply.status).toBe(200);
      if (reply.body.status !== 'in_progress' && reply.body.status !== 'queued') return reply.body;
      await sleep(50);
    }
    throw new Error(`${id} was still running ${BOUND_MS + SLACK_MS} ms after its replica was killed`);
  }

  it('marks a background turn of the killed replica failed within the lease bound', async () => {
    const res = await fetch(`${victim!.baseUrl}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({
        model: assistantId,
        input: 'long background work',
        background: true,
        stream: true,
      }),
    });
    const reader = res.body!.getReader();
    let raw = '';
    while ((raw.match(/response\.output_text\.delta/g) ?? []).length < 3) {
      raw += new TextDecoder().decode((await reader.read()).value);
    }
    const received = raw.split('\n\n').filter((block) => block.startsWith('event: '));
    const id = parseSse(raw).events[0].json.response.id as string;
    // Killed once what the client has is in the database (flushed every 20 ms; bounded wait).
    const dataSource = survivor.running.app.get<DataSource>(getDataSourceToken());
    const storedCount = async () =>
      (
        await dataSource.query<{ n: number }[]>(
          // One row per flush: the events stored are the elements of its arrays.
          'SELECT coalesce(sum(json_array_length(events)), 0)::int AS n FROM response_event_batches WHERE response_id = $1',
          [id.slice('resp_'.length)],
        )
      )[0].n;
    for (let attempt = 0; (await storedCount()) < received.length; attempt++) {
      if (attempt > 500) throw new Error(`the ${received.length} events the client had were never stored`);
      await sleep(20);
    }
    const killedAt = await kill(victim!);
    await reader.read().catch(() => undefined);

    const final = await settled(id, killedAt);
    expect(final).toMatchObject({ id, status: 'failed', error: { code: 'response_interrupted' } });
    // A stream resumed elsewhere gets what was stored (the same bytes the client had), then the error.
    const replay = await fetch(`${survivor.baseUrl}/v1/responses/${id}?stream=true`, {
      headers: { 'x-api-key': key },
    });
    const replayed = (await replay.text()).split('\n\n').filter((block) => block.startsWith('event: '));
    const stored = replayed.slice(0, -1);
    // Everything the client had (the created event and at least three deltas), byte for byte.
    expect(received.length).toBeGreaterThanOrEqual(4);
    expect(stored.length).toBeGreaterThanOrEqual(received.length);
    expect(stored.slice(0, received.length)).toEqual(received);
    expect(parseSse(`${replayed[replayed.length - 1]}\n\n`).events[0].json).toEqual({
      type: 'response.error',
      sequence_number: stored.length,
      error: expect.objectContaining({ code: 'response_interrupted' }),
    });
  });

  it('keeps a foreground turn cut by kill -9: its id answers, then failed, and its user message is in history', async () => {
    const res = await fetch(`${victim!.baseUrl}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key, 'x-user-id': 'u-killed' },
      body: JSON.stringify({ model: assistantId, input: 'remember this question', stream: true }),
    });
    const reader = res.body!.getReader();
    let raw = '';
    while (!raw.includes('response.output_text.delta'))
      raw += new TextDecoder().decode((await reader.read()).value);
    const created = parseSse(raw).events[0].json.response;
    const killedAt = await kill(victim!);
    await reader.read().catch(() => undefined);

    const right = await call(survivor.baseUrl, 'GET', `/v1/responses/${created.id}`, {
      key,
      headers: { 'x-user-id': 'u-killed' },
    });
    expect(right.status).toBe(200);
    const final = await settled(created.id, killedAt, { 'x-user-id': 'u-killed' });
    expect(final).toMatchObject({
      id: created.id,
      status: 'failed',
      error: { code: 'response_interrupted' },
    });

    const history = await call(
      survivor.baseUrl,
      'GET',
      `/v1/chat/history/conversations/${created.conversation.id}/messages`,
      { key, headers: { 'x-user-id': 'u-killed' } },
    );
    expect(history.status).toBe(200);
    expect(JSON.stringify(history.body)).toContain('remember this question');
    // The thread goes on from the failed turn, its question included.
    const next = await call(survivor.baseUrl, 'POST', '/v1/responses', {
      key,
      headers: { 'x-user-id': 'u-killed' },
      body: { model: assistantId, input: 'again', previous_response_id: created.id },
    });
    expect(next.status).toBe(200);
  });
});
