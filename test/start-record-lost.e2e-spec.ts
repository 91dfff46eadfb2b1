import { call } from './support/http.js';
import { parseSse } from './support/sse.js';
import { startTestApp, type TestApp } from './support/test-app.js';

/**
 * A start record lost to a crash of the PostgreSQL server (its commit does not wait for the WAL
 * flush, docs/architecture.md, Durable turns): the rows it wrote are gone, as if never written,
 * while the replica's stream goes on. Simulated by deleting them between `response.created` and
 * the final write (no lease renewal in between: renewals every minute).
 */
describe('a streamed turn whose start record was lost', () => {
  let app: TestApp;
  let key: string;
  let assistantId: string;

  beforeAll(async () => {
    app = await startTestApp({ TURN_LEASE_SECONDS: '3600', TURN_LEASE_RENEW_MS: '60000' });
    const model = {
      provider: 'offline',
      tokenDelayMs: 80,
      script: [{ match: '.', reply: 'one two three four five six' }],
    };
    const organization = await app.seedOrganization('lost-start', model);
    assistantId = organization.assistantId;
    key = organization.keys.full_access;
  });
  afterAll(async () => {
    await app?.close();
  });

  /** Streams a turn; `lose` runs once its response.created is read. */
  async function stream(
    input: string,
    conversation: string | undefined,
    lose: (id: string) => Promise<void>,
  ) {
    const res = await fetch(`${app.baseUrl}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ model: assistantId, input, stream: true, conversation }),
    });
    const reader = res.body!.getReader();
    let raw = '';
    let lost = false;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      raw += new TextDecoder().decode(value);
      if (!lost && raw.includes('response.created')) {
        lost = true;
        const created = parseSse(raw).events[0].json.response;
        await lose(created.id.replace(/^resp_/, ''));
      }
    }
    return parseSse(raw).events;
  }

  const post = (body: Record<string, unknown>) =>
    call(app.baseUrl, 'POST', '/v1/responses', { key, body: { model: assistantId, ...body } });
  const get = (path: string) => call(app.baseUrl, 'GET', path, { key });

  it('continuing a conversation: the turn is not stored, as when it is deleted while it runs', async () => {
    const open = await post({ input: 'open' });
    const conversation = open.body.conversation.id as string;
    const previous = (open.body.id as string).replace(/^resp_/, '');
    const events = await stream('continued turn', conversation, async (id) => {
      // The conversation as it was before the start moved it on, and no row of the turn.
      await app.dataSource.query(
        `UPDATE conversations SET last_response_id = $2,
                last_response_created_at = (SELECT created_at FROM responses WHERE id = $2)
          WHERE last_response_id = $1`,
        [id, previous],
      );
      await app.dataSource.query('DELETE FROM messages WHERE response_id = $1', [id]);
      await app.dataSource.query('DELETE FROM responses WHERE id = $1', [id]);
    });
    const id = events[0].json.response.id as string;
    expect(events.map((event) => event.event)).toContain('response.completed');
    // A lost start cannot be told from a deleted running turn, and a deletion must stand.
    expect((await get(`/v1/responses/${id}`)).status).toBe(404);
    const items = JSON.stringify((await get(`/v1/conversations/${conversation}/items`)).body);
    expect(items).toContain('open');
    expect(items).not.toContain('continued turn');
    // The conversation goes on from its previous head, which it still names.
    const [row] = await app.dataSource.query<{ last_response_id: string }[]>(
      'SELECT last_response_id FROM conversations WHERE id = $1',
      [conversation.replace(/^conv_/, '')],
    );
    expect(row.last_response_id).toBe(previous);
    expect((await post({ input: 'after', previous_response_id: `resp_${previous}` })).body).toMatchObject({
      status: 'completed',
    });
  });

  it('starting a conversation: the turn is not stored, as when its conversation is deleted while it runs', async () => {
    const events = await stream('new conversation', undefined, async (id) => {
      const [row] = await app.dataSource.query<{ conversation_id: string }[]>(
        'SELECT conversation_id FROM responses WHERE id = $1',
        [id],
      );
      await app.dataSource.query('DELETE FROM messages WHERE response_id = $1', [id]);
      await app.dataSource.query('DELETE FROM responses WHERE id = $1', [id]);
      await app.dataSource.query('DELETE FROM conversations WHERE id = $1', [row.conversation_id]);
    });
    const created = events[0].json.response;
    expect(events.map((event) => event.event)).toContain('response.completed');
    // A lost conversation cannot be told from a deleted one, and a deletion must stand.
    expect((await get(`/v1/responses/${created.id}`)).status).toBe(404);
    expect((await get(`/v1/conversations/${created.conversation.id}`)).status).toBe(404);
  });
});
