import { jest } from '@jest/globals';
import { TurnLeases } from '../src/responses/durable/turn-leases.service.js';
import { TurnLedger } from '../src/responses/store/turn-ledger.repository.js';
import { call } from './support/http.js';
import { startTestApp, type TestApp } from './support/test-app.js';

const WORDS = Array.from({ length: 1000 }, (_, i) => `word${i}`);

/**
 * While the app closes (Nest's close, which runs without the shutdown sequence or past its final
 * window), it stops its background turns and waits for them to store what they emitted, its
 * listener still open: a background POST arriving then is refused with 503 `service_unavailable`
 * and Retry-After: 1, before anything is stored, so the client retries on another replica
 * (docs/operations.md, "Graceful shutdown").
 */
describe('a background POST while the replica closes', () => {
  let app: TestApp | undefined;

  afterAll(async () => {
    await app?.close().catch(() => undefined);
  });

  it('answers 503 service_unavailable with Retry-After: 1 and stores nothing', async () => {
    // Events are stored at the stop (not by a flush before it), so the close waits for that write.
    app = await startTestApp({ BACKGROUND_EVENT_FLUSH_MS: '10000' });
    const running = app;
    const org = await running.seedOrganization('bg-closing', {
      provider: 'offline',
      tokenDelayMs: 50,
      script: [{ match: '.', reply: WORDS.join(' ') }],
    });
    const ask = () =>
      call(running.baseUrl, 'POST', '/v1/responses', {
        key: org.keys.full_access,
        body: { model: `asst_${org.assistantId}`, input: 'go', background: true },
      });
    const created = await ask();
    expect(created.status).toBe(200);

    // The close stops the turn (its lease aborted here), then waits for its events' write: held
    // until the POST below has its answer.
    let stopping!: () => void;
    const stopped = new Promise<void>((resolve) => (stopping = resolve));
    const leases = running.running.app.get(TurnLeases);
    const abortLocal = leases.abortLocal.bind(leases);
    jest.spyOn(leases, 'abortLocal').mockImplementation((id) => {
      stopping();
      return abortLocal(id);
    });
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const ledger = running.running.app.get(TurnLedger);
    const appendEvents = ledger.appendEvents.bind(ledger);
    jest.spyOn(ledger, 'appendEvents').mockImplementation(async (id, events) => {
      await gate;
      await appendEvents(id, events);
    });
    const [{ count: before }] = await running.dataSource.query<{ count: string }[]>(
      'SELECT count(*)::text AS count FROM responses',
    );

    const closed = running.close();
    await stopped;
    try {
      const refused = await ask();
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(refused.body.error).toMatchObject({ code: 'service_unavailable' });
      const [{ count: after }] = await running.dataSource.query<{ count: string }[]>(
        'SELECT count(*)::text AS count FROM responses',
      );
      expect(after).toBe(before);
    } finally {
      open();
      await closed;
      app = undefined;
    }
  });
});
