import { jest } from '@jest/globals';
import { Metrics } from '../src/metrics/metrics.service.js';
import { StartRecords } from '../src/responses/store/start-records.js';
import type { TurnStart } from '../src/turns/turn.types.js';
import { HeldTurns } from './support/held-turns.js';
import { call } from './support/http.js';

/**
 * A streamed turn whose start record is refused (its conversation deleted after the request read
 * it) is answered 404 and stores no turn, but its model call was made: the usage the upstream
 * reported before the call was stopped counts for the organization, once, under no user
 * (docs/usage.md, "Cancelled and swept turns").
 */
describe('usage of a streamed turn whose start is refused', () => {
  const held = new HeldTurns();
  const ann = 'ann';

  beforeAll(() => held.start('refused-start'));
  afterAll(() => held.close());

  const total = async () =>
    (await call(held.app.baseUrl, 'GET', '/admin/v1/usage', { key: held.org.keys.admin })).body.total;

  /** Holds every start record until `release`; `reached` settles when the first one arrives. */
  function holdStarts() {
    const starts = held.app.running.app.get(StartRecords);
    const record = starts.record.bind(starts);
    let reached!: () => void;
    let release!: () => void;
    const arrived = new Promise<void>((resolve) => (reached = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    const spy = jest.spyOn(starts, 'record').mockImplementation(async (start: TurnStart) => {
      reached();
      await released;
      return record(start);
    });
    return { arrived, release, restore: () => spy.mockRestore() };
  }

  /** Settles when the model's first events reached the turn (which then waits for its start). */
  function firstEvents() {
    const metrics = held.app.running.app.get(Metrics);
    const original = metrics.timeToFirstToken.bind(metrics);
    let seen!: () => void;
    const arrived = new Promise<void>((resolve) => (seen = resolve));
    const spy = jest.spyOn(metrics, 'timeToFirstToken').mockImplementation((provider, seconds) => {
      original(provider, seconds);
      seen();
    });
    return { arrived, restore: () => spy.mockRestore() };
  }

  it('counts the usage its model call reported, once, under no user, and stores nothing else', async () => {
    const conversation = await held.conversation(ann);
    const before = await total();
    const starts = holdStarts();
    const events = firstEvents();
    let reply: Response;
    try {
      // The whole answer and its usage chunk reach the service in one read, before the start is refused.
      held.upstream.script({ text: 'answer A', oneRead: true });
      const replied = fetch(`${held.app.baseUrl}/v1/responses`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-key': held.org.keys.full_access,
          'x-user-id': ann,
        },
        body: JSON.stringify({ model: held.model, input: 'question A', conversation, stream: true }),
      });
      await Promise.all([starts.arrived, events.arrived]);
      expect((await held.call(ann, 'DELETE', `/v1/conversations/${conversation}`)).status).toBe(200);
      starts.release();
      reply = await replied;
    } finally {
      starts.restore();
      events.restore();
    }
    expect(reply.status).toBe(404);
    expect(((await reply.json()) as any).error.code).toBe('conversation_not_found');

    // Written before the 404 is sent (no flush runs within the test: the report reads it pending).
    expect(await total()).toMatchObject({
      turns: before.turns + 1,
      input_tokens: before.input_tokens + 11,
      output_tokens: before.output_tokens + 2,
    });
    const pending = await held.app.dataSource.query<{ user_id: string }[]>(
      `SELECT user_id FROM usage_pending WHERE organization_id = $1 AND user_id = ''`,
      [held.org.id],
    );
    expect(pending).toHaveLength(1);
    const [responses] = await held.app.dataSource.query<{ n: number }[]>(
      'SELECT count(*)::integer AS n FROM responses WHERE organization_id = $1',
      [held.org.id],
    );
    // The conversation's first turn went with it; the refused turn left no row.
    expect(responses.n).toBe(0);
  });
});
