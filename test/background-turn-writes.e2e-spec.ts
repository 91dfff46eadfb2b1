import { jest } from '@jest/globals';
import { TurnLedger } from '../src/responses/store/turn-ledger.repository.js';
import { call, untilFinished } from './support/http.js';
import { parseSse } from './support/sse.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

const WORDS = Array.from({ length: 60 }, (_, i) => `word${i}`);

/**
 * What a background turn writes: its start row, already running when it starts at once, and its
 * last events stored by the statement that stores its final row, so a resume on another replica
 * (which reads the database) has every event even when flushes before it were refused.
 */
describe('background turn writes (two replicas, one database)', () => {
  let a: TestApp;
  let b: TestApp;
  let org: SeededOrganization;

  beforeAll(async () => {
    a = await startTestApp({ BACKGROUND_EVENT_FLUSH_MS: '20', RESUME_POLL_MS: '20' });
    b = await startTestApp({ RESUME_POLL_MS: '20' }, { reuse: a.database });
    // Slow enough that several flushes come due while the turn runs.
    org = await a.seedOrganization('bg-writes', {
      provider: 'offline',
      tokenDelayMs: 5,
      script: [{ match: '.', reply: WORDS.join(' ') }],
    });
  });
  afterAll(async () => {
    await b?.stop().catch(() => undefined);
    await a?.close();
  });

  const finished = (id: string) => untilFinished(b.baseUrl, org.keys.full_access, id);

  it('records a turn that starts at once as running on this replica, with its lease, needing no claim', async () => {
    // A claim of the row (queued → in_progress) would wait until the row has been read below.
    const ledger = a.running.app.get(TurnLedger);
    const claim = ledger.markRunning.bind(ledger);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const claimed = jest.spyOn(ledger, 'markRunning').mockImplementation(async (id) => {
      await gate;
      await claim(id);
    });
    try {
      const created = await call(a.baseUrl, 'POST', '/v1/responses', {
        key: org.keys.full_access,
        body: { model: `asst_${org.assistantId}`, input: 'go', background: true },
      });
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({ status: 'queued', background: true });
      const [row] = await a.dataSource.query(
        `SELECT status, owner_id IS NOT NULL AS owned, lease_expires_at > now() AS leased
           FROM responses WHERE id = $1`,
        [(created.body.id as string).replace(/^resp_/, '')],
      );
      expect(row).toEqual({ status: 'in_progress', owned: true, leased: true });
      open();
      expect((await finished(created.body.id)).status).toBe('completed');
      expect(claimed).not.toHaveBeenCalled();
    } finally {
      open();
      claimed.mockRestore();
    }
  });

  it('stores the events its refused flushes kept, and the last ones, with the final row: a resume elsewhere gets the whole stream', async () => {
    // The database refuses every flush of events while the turn runs.
    const refused = jest
      .spyOn(a.running.app.get(TurnLedger), 'appendEvents')
      .mockRejectedValue(new Error('connection terminated'));
    let id: string;
    try {
      const created = await call(a.baseUrl, 'POST', '/v1/responses', {
        key: org.keys.full_access,
        body: { model: `asst_${org.assistantId}`, input: 'go', background: true },
      });
      expect(created.status).toBe(200);
      id = created.body.id as string;
      const done = await finished(id);
      expect(done.status).toBe('completed');
      expect(refused).toHaveBeenCalled();
    } finally {
      refused.mockRestore();
    }

    // Replica b does not run the turn: it streams what the database holds.
    const res = await fetch(`${b.baseUrl}/v1/responses/${id}?stream=true`, {
      headers: { 'x-api-key': org.keys.full_access },
    });
    expect(res.status).toBe(200);
    const events = parseSse(await res.text()).events.filter((event) => event.event !== undefined);
    expect(events.map((event) => event.json.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events[0].event).toBe('response.created');
    const deltas = events.filter((event) => event.event === 'response.output_text.delta');
    expect(deltas.map((event) => event.json.delta).join('')).toBe(WORDS.join(' '));
    expect(events.at(-1)).toMatchObject({
      event: 'response.completed',
      json: { response: { id, status: 'completed', output_text: WORDS.join(' ') } },
    });
  });
});
