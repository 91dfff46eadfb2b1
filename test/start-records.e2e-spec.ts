import pg from 'pg';
import { call } from './support/http.js';
import { parseSse } from './support/sse.js';
import { startTestApp, type TestApp } from './support/test-app.js';

/**
 * The start records of streamed turns (StartRecords): written in groups on a connection kept for
 * them, so a stream's `response.created` (and so its first token) never waits for a pool full of
 * other turns' final writes, and each id it hands out answers at once.
 */
const onServer = process.env.DATABASE_URL ? it : it.skip;

/** Reads a stream until `until` is in it; the reader stays open for the rest. */
async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, until: string): Promise<string> {
  let raw = '';
  while (!raw.includes(until)) {
    const { value, done } = await reader.read();
    if (done) break;
    raw += new TextDecoder().decode(value);
  }
  return raw;
}

describe('start records of streamed turns', () => {
  let app: TestApp;
  let baseUrl: string;
  let key: string;
  let assistantId: string;

  beforeAll(async () => {
    // A small pool (the smallest that keeps connections for start records), so a few turns blocked
    // in their final write hold all the others.
    app = await startTestApp({ DATABASE_POOL_MAX: '8' });
    baseUrl = app.baseUrl;
    const model = {
      provider: 'offline',
      tokenDelayMs: 5,
      script: [{ match: '.', reply: 'one two three four' }],
    };
    const organization = await app.seedOrganization('starts', model);
    assistantId = organization.assistantId;
    key = organization.keys.full_access;
  });
  afterAll(async () => {
    await app?.close();
  });

  const stream = (input: string, extra: Record<string, unknown> = {}) =>
    fetch(`${baseUrl}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ model: assistantId, input, stream: true, ...extra }),
    });
  const get = (id: string) => call(baseUrl, 'GET', `/v1/responses/${id}`, { key });

  it('records the starts of many streams at once, several in one conversation: each id answers at response.created', async () => {
    const first = parseSse(await (await stream('open the conversation')).text()).events.find(
      (event) => event.event === 'response.completed',
    )!.json.response;
    const turns = Array.from({ length: 12 }, (_, i) =>
      stream(`turn ${i}`, i % 3 === 0 ? { conversation: first.conversation.id } : {}).then(async (res) => {
        const reader = res.body!.getReader();
        const created = parseSse(await readUntil(reader, 'response.in_progress')).events[0];
        expect(created.event).toBe('response.created');
        // The id it hands out answers at once, as running.
        const read = await get(created.json.response.id);
        expect(read.status).toBe(200);
        expect(read.body.id).toBe(created.json.response.id);
        expect(['in_progress', 'completed']).toContain(read.body.status);
        await readUntil(reader, 'response.completed');
        return created.json.response;
      }),
    );
    const started = await Promise.all(turns);
    for (const [i, response] of started.entries()) {
      const done = await get(response.id);
      expect(done.body).toMatchObject({ status: 'completed', output_text: 'one two three four' });
      if (i % 3 === 0) expect(response.conversation.id).toBe(first.conversation.id);
    }
    for (const [i, response] of started.entries()) {
      const input = await call(baseUrl, 'GET', `/v1/responses/${response.id}/input_items`, { key });
      expect(JSON.stringify(input.body)).toContain(`turn ${i}`);
    }
    expect(new Set(started.map((response) => response.conversation.id)).size).toBe(9);
  });

  onServer(
    'sends response.created while every other connection of the pool waits in a final write',
    async () => {
      // One stream first: its start takes the connection kept for start records.
      await (await stream('warm up')).text();
      const admin = new pg.Client({ connectionString: app.database.url });
      await admin.connect();
      const blocked: Promise<string>[] = [];
      try {
        // Every final write (and the usage flush) inserts into usage_pending: held here, they wait
        // holding their connections, all the pool has but those kept for start records.
        await admin.query('BEGIN');
        await admin.query('LOCK TABLE usage_pending IN EXCLUSIVE MODE');
        for (let i = 0; i < 8; i++) blocked.push(stream(`blocked ${i}`).then((res) => res.text()));
        // pg_stat_activity is read once per transaction (and this client is in one): each count
        // clears that snapshot first, or it would repeat the first count forever.
        const waiting = async () => {
          await admin.query('SELECT pg_stat_clear_snapshot()');
          const { rows } = await admin.query<{ count: number }>(
            `SELECT count(*)::int AS count FROM pg_stat_activity
              WHERE datname = current_database() AND wait_event_type = 'Lock'`,
          );
          return rows[0].count;
        };
        for (let tries = 0; (await waiting()) < 6 && tries < 200; tries++)
          await new Promise((r) => setTimeout(r, 25));
        expect(await waiting()).toBeGreaterThanOrEqual(6);

        const res = await stream('not queued');
        const reader = res.body!.getReader();
        const raw = await Promise.race([
          readUntil(reader, 'response.output_text.delta'),
          new Promise<string>((resolve) => setTimeout(() => resolve('(nothing within 2 s)'), 2000)),
        ]);
        expect(parseSse(raw).events[0]?.event).toBe('response.created');
        expect(raw).toContain('response.output_text.delta');
        await admin.query('ROLLBACK');
        const created = parseSse(raw).events[0].json.response;
        await readUntil(reader, 'response.completed');
        expect((await get(created.id)).body).toMatchObject({ status: 'completed' });
        for (const text of await Promise.all(blocked)) expect(text).toContain('response.completed');
      } finally {
        await admin.end();
      }
    },
  );
});
