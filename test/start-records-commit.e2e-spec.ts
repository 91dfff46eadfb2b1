import { setTimeout as sleep } from 'node:timers/promises';
import { call } from './support/http.js';
import { parseSse } from './support/sse.js';
import { startTestApp, type TestApp } from './support/test-app.js';

/**
 * Which writes of a turn commit without waiting for the WAL flush (docs/architecture.md, Durable
 * turns): a foreground stream's start record and the lease renewals do; a background turn's start
 * (its client's only receipt), every final write and a JSON turn's insert wait for it. A deferred
 * trigger on `responses` runs inside each commit, just before the commit record is written, so
 * the `synchronous_commit` it reads is the one that commit obeys.
 */
describe('synchronous_commit of the writes of a turn', () => {
  let app: TestApp;
  let key: string;
  let assistantId: string;
  /** What a synchronous commit reads: the server's own setting (`on` unless configured). */
  let serverSetting: string;

  beforeAll(async () => {
    // Renewals every 50 ms, so a few happen while a stream runs.
    app = await startTestApp({ TURN_LEASE_SECONDS: '2', TURN_LEASE_RENEW_MS: '50' });
    const model = {
      provider: 'offline',
      tokenDelayMs: 60,
      script: [{ match: '.', reply: 'one two three four five six seven eight' }],
    };
    const organization = await app.seedOrganization('commits', model);
    assistantId = organization.assistantId;
    key = organization.keys.full_access;
    [{ serverSetting }] = await app.dataSource.query<{ serverSetting: string }[]>(
      `SELECT reset_val AS "serverSetting" FROM pg_settings WHERE name = 'synchronous_commit'`,
    );
    expect(serverSetting).not.toBe('off');
    await app.dataSource.query(`CREATE TABLE commit_probe (
      at serial PRIMARY KEY, response_id uuid, op text, status text, setting text)`);
    await app.dataSource.query(`CREATE FUNCTION commit_probe() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO commit_probe (response_id, op, status, setting)
        VALUES (NEW.id, TG_OP, NEW.status, current_setting('synchronous_commit'));
        RETURN NULL;
      END $$`);
    await app.dataSource.query(`CREATE CONSTRAINT TRIGGER commit_probe AFTER INSERT OR UPDATE ON responses
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION commit_probe()`);
  });
  afterAll(async () => {
    await app?.close();
  });

  const post = (body: Record<string, unknown>) =>
    call(app.baseUrl, 'POST', '/v1/responses', { key, body: { model: assistantId, ...body } });
  const probes = async (id: string) =>
    (await app.dataSource.query<{ op: string; status: string; setting: string }[]>(
      'SELECT op, status, setting FROM commit_probe WHERE response_id = $1 ORDER BY at',
      [id.replace(/^resp_/, '')],
    )) as { op: string; status: string; setting: string }[];

  it("commits a stream's start record and lease renewals asynchronously, its final write synchronously", async () => {
    for (const conversation of [undefined, 'continued'] as const) {
      const first = conversation && (await post({ input: 'open' })).body.conversation.id;
      const res = await fetch(`${app.baseUrl}/v1/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key },
        body: JSON.stringify({ model: assistantId, input: 'stream', stream: true, conversation: first }),
      });
      const events = parseSse(await res.text()).events;
      const id = events.find((event) => event.event === 'response.completed')!.json.response.id;
      const seen = await probes(id);
      expect(seen[0]).toEqual({ op: 'INSERT', status: 'in_progress', setting: 'off' });
      const renewals = seen.filter((probe) => probe.op === 'UPDATE' && probe.status === 'in_progress');
      expect(renewals.length).toBeGreaterThan(0);
      for (const renewal of renewals) expect(renewal.setting).toBe('off');
      expect(seen.at(-1)).toEqual({ op: 'UPDATE', status: 'completed', setting: serverSetting });
    }
  });

  it("commits a background turn's start and a JSON turn's insert synchronously", async () => {
    const background = await post({ input: 'later', background: true });
    expect(background.status).toBe(200);
    for (let tries = 0; tries < 100; tries++) {
      const read = await call(app.baseUrl, 'GET', `/v1/responses/${background.body.id}`, { key });
      if (read.body.status === 'completed') break;
      await sleep(50);
    }
    expect((await call(app.baseUrl, 'GET', `/v1/responses/${background.body.id}`, { key })).body.status).toBe(
      'completed',
    );
    const seen = await probes(background.body.id);
    expect(seen[0]).toMatchObject({ op: 'INSERT', setting: serverSetting });
    expect(seen.at(-1)).toEqual({ op: 'UPDATE', status: 'completed', setting: serverSetting });

    const json = await post({ input: 'at once' });
    expect(await probes(json.body.id)).toEqual([
      { op: 'INSERT', status: 'completed', setting: serverSetting },
    ]);
  });
});
