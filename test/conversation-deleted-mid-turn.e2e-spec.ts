import { HeldTurns, waitUntil } from './support/held-turns.js';
import { call } from './support/http.js';
import { parseSse } from './support/sse.js';

/**
 * A conversation deleted (DELETE /v1/conversations/{id}), or its user erased, while a turn of it
 * runs (docs/architecture.md, "A conversation deleted mid-turn"): the deletion wins. The turn's
 * client still gets its answer, but its final write stores nothing under the conversation and does
 * not bring it back; the tokens the upstream billed are still counted, under no user.
 */
describe('a conversation deleted while a turn of it runs', () => {
  const held = new HeldTurns();
  const ann = 'ann';

  beforeAll(() => held.start('deleted-mid-turn'));
  afterAll(() => held.close());

  /** What is stored under a conversation: its row, its responses, its chat-history messages. */
  async function storedUnder(id: string): Promise<number[]> {
    const counts: number[] = [];
    for (const [table, column] of [
      ['conversations', 'id'],
      ['responses', 'conversation_id'],
      ['messages', 'conversation_id'],
    ]) {
      const [row] = await held.app.dataSource.query<{ n: number }[]>(
        `SELECT count(*)::integer AS n FROM ${table} WHERE ${column} = $1`,
        [id],
      );
      counts.push(row.n);
    }
    return counts;
  }

  /** The turn's final write is done: its usage is pending (no flush runs within a test). */
  async function usageWritten(responseId: string): Promise<void> {
    await waitUntil(async () => {
      const rows: unknown[] = await held.app.dataSource.query(
        'SELECT 1 FROM usage_pending WHERE response_id = $1',
        [responseId.slice('resp_'.length)],
      );
      return rows.length > 0;
    }, 'the final write');
  }

  async function deleteConversation(id: string): Promise<void> {
    expect((await held.call(ann, 'DELETE', `/v1/conversations/${id}`)).status).toBe(200);
  }

  async function assertGone(id: string, responseId: string): Promise<void> {
    expect((await held.call(ann, 'GET', `/v1/conversations/${id}`)).status).toBe(404);
    expect((await held.call(ann, 'GET', `/v1/responses/${responseId}`)).status).toBe(404);
    expect(await storedUnder(id)).toEqual([0, 0, 0]);
  }

  it('streamed: the conversation stays deleted; the stream still ends completed', async () => {
    const conversation = await held.conversation(ann);
    const turn = await held.heldStream(ann, conversation);
    await deleteConversation(conversation);
    turn.release();
    const events = parseSse(await turn.stream.rest()).events;
    const completed = events.find((event) => event.event === 'response.completed');
    expect(completed?.json.response).toMatchObject({ status: 'completed', output_text: 'answer A' });

    await usageWritten(turn.id);
    await assertGone(conversation, turn.id);
  });

  it('JSON: the conversation stays deleted; the client still gets its answer', async () => {
    const conversation = await held.conversation(ann);
    const turn = await held.heldTurn(ann, conversation);
    await deleteConversation(conversation);
    turn.release();
    const answered = await turn.reply;
    expect(answered.status).toBe(200);
    expect(answered.body.output_text).toBe('answer A');

    await assertGone(conversation, answered.body.id as string);
  });

  it('background: the conversation stays deleted', async () => {
    const conversation = await held.conversation(ann);
    const turn = await held.heldTurn(ann, conversation, true);
    const started = await turn.reply;
    expect(started.status).toBe(200);
    await deleteConversation(conversation);
    turn.release();

    await usageWritten(started.body.id as string);
    await assertGone(conversation, started.body.id as string);
  });

  it('a user erased mid-turn: nothing of theirs comes back, the turn is counted under no user', async () => {
    const eve = 'eve';
    const conversation = await held.conversation(eve);
    const turn = await held.heldTurn(eve, conversation);
    const erased = await call(
      held.app.baseUrl,
      'DELETE',
      `/admin/v1/organizations/${held.org.slug}/users/eve`,
      {
        key: held.org.keys.admin,
      },
    );
    expect(erased.status).toBe(200);
    turn.release();
    const answered = await turn.reply;
    expect(answered.body.output_text).toBe('answer A');

    expect(await storedUnder(conversation)).toEqual([0, 0, 0]);
    expect((await held.call(eve, 'GET', '/v1/chat/history/conversations')).body).toEqual([]);
    const [usage] = await held.app.dataSource.query<{ user_id: string }[]>(
      'SELECT user_id FROM usage_pending WHERE response_id = $1',
      [(answered.body.id as string).slice('resp_'.length)],
    );
    expect(usage).toEqual({ user_id: '' });
  });

  it('a turn that starts a conversation still creates it', async () => {
    const first = await held.turn(ann, { input: 'hello' }, 'hi');
    expect(first.status).toBe(200);
    expect(await storedUnder(first.body.conversation.id as string)).toEqual([1, 1, 2]);
  });
});
