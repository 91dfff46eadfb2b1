import type { ApiReply } from './support/http.js';
import { HeldTurns } from './support/held-turns.js';

/**
 * Many foreground JSON turns ending at once (docs/architecture.md, "Durable turns"): their final
 * writes go to the database together, and each turn is still stored, or not, exactly as it would
 * be alone: new conversations created, continued ones moved on, a conversation deleted meanwhile
 * left deleted (the client still gets its answer), one that changed hands meanwhile untouched (404).
 */
describe('concurrent JSON turns ending together', () => {
  const held = new HeldTurns();
  const users = ['ann', 'bob', 'cat'];

  beforeAll(() => held.start('insert-groups'));
  afterAll(() => held.close());

  const query = <Row>(sql: string, values: unknown[]): Promise<Row[]> =>
    held.app.dataSource.query(sql, values);
  const rawId = (id: string) => id.slice('resp_'.length);

  /** The stored rows of a response: its conversation, its messages' roles, its pending usage's user. */
  async function storedRows(responseId: string) {
    const [response] = await query<{ conversation_id: string; status: string; output_text: string }>(
      'SELECT conversation_id, status, output_text FROM responses WHERE id = $1',
      [rawId(responseId)],
    );
    const messages = await query<{ role: string }>(
      'SELECT role FROM messages WHERE response_id = $1 ORDER BY position',
      [rawId(responseId)],
    );
    const usage = await query<{ user_id: string }>(
      'SELECT user_id FROM usage_pending WHERE response_id = $1',
      [rawId(responseId)],
    );
    return { response, roles: messages.map((m) => m.role), usage: usage.map((u) => u.user_id) };
  }

  async function conversationRow(id: string) {
    const [row] = await query<{ last_response_id: string; organization_id: string }>(
      'SELECT last_response_id, organization_id FROM conversations WHERE id = $1',
      [id],
    );
    return row;
  }

  /** `count` turns of new conversations held at the model and released together; their replies. */
  async function newTurnsAtOnce(count: number): Promise<{ user: string; reply: ApiReply }[]> {
    let release!: () => void;
    const ended = new Promise<void>((resolve) => (release = resolve));
    const calls = held.upstream.requests.length;
    const turns = Array.from({ length: count }, (_, i) => {
      held.upstream.script({ text: 'held answer', resumeAfter: ended });
      return { user: users[i % users.length], reply: held.turn(users[i % users.length], { input: 'hello' }) };
    });
    await held.modelCalled(calls + count);
    release();
    return Promise.all(turns.map(async ({ user, reply }) => ({ user, reply: await reply })));
  }

  it('stores a burst of turns that all start their conversation', async () => {
    for (const { user, reply } of await newTurnsAtOnce(10)) {
      expect(reply.status).toBe(200);
      const id = reply.body.id as string;
      const conversationId = reply.body.conversation.id as string;
      expect(await storedRows(id)).toEqual({
        response: { conversation_id: conversationId, status: 'completed', output_text: 'held answer' },
        roles: ['user', 'assistant'],
        usage: [user],
      });
      expect((await conversationRow(conversationId)).last_response_id).toBe(rawId(id));
    }
  });

  it('stores every turn as it would alone, and answers each client as it would', async () => {
    // Conversations to continue: one per user, one to delete meanwhile, one to hand to another organization.
    const continued = await Promise.all(users.map((user) => held.conversation(user)));
    const deleted = await held.conversation('ann');
    const movedAway = await held.conversation('bob');
    const other = await held.app.seedOrganization('insert-groups-other');

    let release!: () => void;
    const ended = new Promise<void>((resolve) => (release = resolve));
    const calls = held.upstream.requests.length;
    const started: { user: string; conversation?: string; reply: Promise<ApiReply> }[] = [];
    const send = (user: string, conversation?: string) => {
      held.upstream.script({ text: 'held answer', resumeAfter: ended });
      const body = conversation ? { input: 'next', conversation } : { input: 'hello' };
      started.push({ user, conversation, reply: held.turn(user, body) });
    };
    for (let i = 0; i < 12; i++) send(users[i % users.length]);
    for (const [i, conversation] of continued.entries()) send(users[i], conversation);
    // Two turns of one conversation at once (they go in different statements).
    send('ann', continued[0]);
    send('ann', deleted);
    send('bob', movedAway);
    await held.modelCalled(calls + started.length);

    expect((await held.call('ann', 'DELETE', `/v1/conversations/${deleted}`)).status).toBe(200);
    await query('UPDATE conversations SET organization_id = $1 WHERE id = $2', [other.id, movedAway]);
    release();
    const replies = await Promise.all(started.map((turn) => turn.reply));

    for (const [i, { user, conversation }] of started.entries()) {
      const reply = replies[i];
      if (conversation === movedAway) {
        // The final write found the conversation another organization's: nothing stored, 404 as GET.
        expect(reply.status).toBe(404);
        continue;
      }
      expect(reply.status).toBe(200);
      expect(reply.body.output_text).toBe('held answer');
      const id = reply.body.id as string;
      const rows = await storedRows(id);
      if (conversation === deleted) {
        // The deletion wins: nothing stored under the conversation, the usage kept under no user.
        expect(rows).toEqual({ response: undefined, roles: [], usage: [''] });
        expect(await conversationRow(deleted)).toBeUndefined();
        continue;
      }
      const conversationId = conversation ?? (reply.body.conversation.id as string);
      expect(rows).toEqual({
        response: { conversation_id: conversationId, status: 'completed', output_text: 'held answer' },
        roles: ['user', 'assistant'],
        usage: [user],
      });
      const polled = await held.call(user, 'GET', `/v1/responses/${id}`);
      expect(polled.status).toBe(200);
      expect(polled.body.output_text).toBe('held answer');
      if (!conversation) expect((await conversationRow(conversationId)).last_response_id).toBe(rawId(id));
    }

    // Each continued conversation's head is one of its new turns.
    for (const conversation of continued) {
      const heads = started
        .map((turn, i) => (turn.conversation === conversation ? rawId(replies[i].body.id as string) : null))
        .filter((id) => id !== null);
      expect(heads).toContain((await conversationRow(conversation)).last_response_id);
    }
    // The conversation of another organization now: untouched, nothing of ann's turn under it.
    const [{ n }] = await query<{ n: number }>(
      'SELECT count(*)::integer AS n FROM responses WHERE conversation_id = $1',
      [movedAway],
    );
    expect(n).toBe(1);
    expect((await conversationRow(movedAway)).organization_id).toBe(other.id);
  });
});
