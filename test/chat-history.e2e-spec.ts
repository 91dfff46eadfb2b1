import { randomUUID } from 'node:crypto';
import { AssistantsService } from '../src/assistants/assistants.service.js';
import { call, type ApiReply } from './support/http.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

interface TurnReply {
  id: string;
  conversation: { id: string };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const LIST = '/v1/chat/history/conversations';

describe('chat history endpoints', () => {
  let app: TestApp;
  let orgA: SeededOrganization;
  let orgB: SeededOrganization;
  /** A second assistant of organization A, for the assistant_id filter. */
  let secondAssistantId: string;

  beforeAll(async () => {
    app = await startTestApp();
    orgA = await app.seedOrganization('history-a');
    orgB = await app.seedOrganization('history-b');
    secondAssistantId = (
      await app.running.app
        .get(AssistantsService)
        .create(orgA.id, { name: 'second', model: { provider: 'offline' } })
    ).id;
  });
  afterAll(async () => {
    await app?.close();
  });

  /** One turn on the offline model, which answers "You said: <input>". */
  const turn = async (
    input: string,
    userId: string | undefined,
    options: { previous?: string; org?: SeededOrganization; assistantId?: string } = {},
  ): Promise<TurnReply> => {
    const org = options.org ?? orgA;
    const reply = await call(app.baseUrl, 'POST', '/v1/responses', {
      key: org.keys.assistant,
      headers: userId === undefined ? {} : { 'x-user-id': userId },
      body: {
        model: options.assistantId ?? org.assistantId,
        input,
        previous_response_id: options.previous,
      },
    });
    expect(reply.status).toBe(200);
    return reply.body as TurnReply;
  };

  const get = (path: string, userId: string | undefined, key = orgA.keys.user): Promise<ApiReply> =>
    call(app.baseUrl, 'GET', path, { key, headers: userId === undefined ? {} : { 'x-user-id': userId } });

  const messagesPath = (conversationId: string, query = '') => `${LIST}/${conversationId}/messages${query}`;

  const contents = (reply: ApiReply) => (reply.body as { content: string }[]).map((m) => m.content);

  describe('GET /v1/chat/history/conversations', () => {
    let tea: TurnReply;
    let trip: TurnReply;
    let books: TurnReply;
    let teaFollowUp: TurnReply;

    beforeAll(async () => {
      tea = await turn('Which tea goes with breakfast?', 'alice');
      trip = await turn(
        '  Plan   a two-week\n\ttrip through the mountains of northern Italy with stops for hiking, food and museums',
        'alice',
      );
      books = await turn('Recommend a book', 'alice', { assistantId: secondAssistantId });
      teaFollowUp = await turn('And for the afternoon?', 'alice', { previous: tea.id });
    });

    it('lists the user’s conversations, most recently updated first, with exactly the fields of 2.5', async () => {
      const reply = await get(LIST, 'alice');
      expect(reply.status).toBe(200);
      expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
      expect(reply.headers.get('x-next-cursor')).toBeNull();
      expect(reply.headers.get('link')).toBeNull();
      const rows: { id: string; created_at: Date; updated_at: Date }[] = await app.dataSource.query(
        `SELECT id, created_at, updated_at FROM conversations WHERE organization_id = $1 AND user_id = 'alice'`,
        [orgA.id],
      );
      const stored = new Map(rows.map((row) => [row.id, row]));
      const expected = (conversation: TurnReply, title: string, assistantId: string) => {
        const row = stored.get(conversation.conversation.id)!;
        return {
          id: conversation.conversation.id,
          title,
          isActive: true,
          createdAt: row.created_at.toISOString(),
          updatedAt: row.updated_at.toISOString(),
          assistantId: `asst_${assistantId}`,
        };
      };
      // The tea conversation was continued last, so it comes first.
      expect(reply.body).toEqual([
        expected(tea, 'Which tea goes with breakfast?', orgA.assistantId),
        expected(books, 'Recommend a book', secondAssistantId),
        // Whitespace collapsed, cut at a word boundary to at most 80 characters.
        expected(
          trip,
          'Plan a two-week trip through the mountains of northern Italy with stops for',
          orgA.assistantId,
        ),
      ]);
      for (const conversation of reply.body) {
        expect(Object.keys(conversation).sort()).toEqual(
          ['assistantId', 'createdAt', 'id', 'isActive', 'title', 'updatedAt'].sort(),
        );
        expect(conversation.id).toMatch(UUID);
        expect(conversation.createdAt).toMatch(ISO);
        expect(Date.parse(conversation.updatedAt)).toBeGreaterThanOrEqual(Date.parse(conversation.createdAt));
      }
      // The conversation's id is the one the Response object carries, and updatedAt is its last turn.
      expect(teaFollowUp.conversation.id).toBe(tea.conversation.id);
      expect(Date.parse(reply.body[0].updatedAt)).toBeGreaterThan(Date.parse(reply.body[0].createdAt));
    });

    it('narrows to one assistant with assistant_id, bare or asst_-prefixed', async () => {
      for (const filter of [secondAssistantId, `asst_${secondAssistantId}`]) {
        const reply = await get(`${LIST}?assistant_id=${filter}`, 'alice');
        expect(reply.status).toBe(200);
        expect(reply.body.map((c: { id: string }) => c.id)).toEqual([books.conversation.id]);
      }
      const missing = await get(`${LIST}?assistant_id=${randomUUID()}`, 'alice');
      expect(missing.status).toBe(404);
      expect(missing.body.error.code).toBe('assistant_not_found');
      // Another organization's assistant is no assistant of this one.
      const foreign = await get(`${LIST}?assistant_id=${orgB.assistantId}`, 'alice');
      expect(foreign.status).toBe(404);
      const malformed = await get(`${LIST}?assistant_id=nope`, 'alice');
      expect(malformed.status).toBe(400);
      expect(malformed.body.error.code).toBe('invalid_request');
    });

    it('reports a conversation idle longer than CONVERSATION_IDLE_HOURS as inactive, until it continues', async () => {
      await app.dataSource.query(
        `UPDATE conversations SET updated_at = now() - interval '25 hours' WHERE id = $1`,
        [trip.conversation.id],
      );
      const idle = await get(LIST, 'alice');
      expect(idle.body.map((c: { id: string; isActive: boolean }) => [c.id, c.isActive])).toEqual([
        [tea.conversation.id, true],
        [books.conversation.id, true],
        [trip.conversation.id, false],
      ]);
      await turn('Add a day in Turin', 'alice', { previous: trip.id });
      const again = await get(LIST, 'alice');
      expect(again.body[0]).toMatchObject({ id: trip.conversation.id, isActive: true });
    });

    it('does not list anonymous conversations, nor other users’ or organizations’', async () => {
      const anonymous = await turn('I have no user id', undefined);
      const bobs = await turn('Bob here', 'bob');
      await turn('Alice in another organization', 'alice', { org: orgB });

      const ids = (reply: ApiReply) => reply.body.map((c: { id: string }) => c.id);
      const alice = await get(LIST, 'alice');
      expect(ids(alice)).not.toContain(anonymous.conversation.id);
      expect(ids(alice)).not.toContain(bobs.conversation.id);
      expect(alice.body).toHaveLength(3);
      expect(ids(await get(LIST, 'bob'))).toEqual([bobs.conversation.id]);
      expect((await get(LIST, 'nobody')).body).toEqual([]);

      // Organization B's key sees only B's alice, never A's.
      const inB = await get(LIST, 'alice', orgB.keys.user);
      expect(inB.status).toBe(200);
      expect(inB.body).toHaveLength(1);
      expect(inB.body[0].title).toBe('Alice in another organization');
      expect(inB.body[0].assistantId).toBe(`asst_${orgB.assistantId}`);
    });
  });

  describe('GET /v1/chat/history/conversations/:id/messages', () => {
    it('lists the messages of the conversation oldest first, with exactly the fields of 2.6', async () => {
      const first = await turn('Hello there', 'carol');
      const second = await turn('How are you?', 'carol', { previous: first.id });
      const reply = await get(messagesPath(first.conversation.id), 'carol');
      expect(reply.status).toBe(200);
      const rows: { id: string; created_at: Date }[] = await app.dataSource.query(
        `SELECT m.id, m.created_at FROM messages m JOIN responses r ON r.id = m.response_id
          WHERE m.conversation_id = $1 ORDER BY r.depth, m.position`,
        [first.conversation.id],
      );
      expect(reply.body).toEqual([
        {
          id: `msg_${rows[0].id}`,
          role: 'user',
          content: 'Hello there',
          createdAt: rows[0].created_at.toISOString(),
        },
        {
          id: `msg_${rows[1].id}`,
          role: 'assistant',
          content: 'You said: Hello there',
          createdAt: rows[1].created_at.toISOString(),
        },
        {
          id: `msg_${rows[2].id}`,
          role: 'user',
          content: 'How are you?',
          createdAt: rows[2].created_at.toISOString(),
        },
        {
          id: `msg_${rows[3].id}`,
          role: 'assistant',
          content: 'You said: How are you?',
          createdAt: rows[3].created_at.toISOString(),
        },
      ]);
      for (const message of reply.body) expect(message.id).toMatch(/^msg_[0-9a-f-]{36}$/);
      const times = reply.body.map((m: { createdAt: string }) => Date.parse(m.createdAt));
      expect([...times].sort((a, b) => a - b)).toEqual(times);
      expect(second.conversation.id).toBe(first.conversation.id);
    });

    it('follows the branch of the newest turn: two continuations of one response never interleave', async () => {
      const root = await turn('Root question', 'dave');
      const branchA = await turn('Branch A question', 'dave', { previous: root.id });
      await turn('Branch B question', 'dave', { previous: root.id });
      const conversation = root.conversation.id;
      expect(contents(await get(messagesPath(conversation), 'dave'))).toEqual([
        'Root question',
        'You said: Root question',
        'Branch B question',
        'You said: Branch B question',
      ]);
      // Continuing branch A makes it the newest: history now follows A, with nothing of B.
      await turn('Deeper on A', 'dave', { previous: branchA.id });
      expect(contents(await get(messagesPath(conversation), 'dave'))).toEqual([
        'Root question',
        'You said: Root question',
        'Branch A question',
        'You said: Branch A question',
        'Deeper on A',
        'You said: Deeper on A',
      ]);
      // Still one conversation in the list.
      expect((await get(LIST, 'dave')).body.map((c: { id: string }) => c.id)).toEqual([conversation]);
    });

    it('answers 404 conversation_not_found alike for missing, malformed, anonymous, other users’ and other organizations’ conversations', async () => {
      const erins = await turn('Private to Erin', 'erin');
      const anonymous = await turn('Nobody’s', undefined);
      const expectedBody = {
        error: {
          type: 'not_found_error',
          code: 'conversation_not_found',
          message: 'No conversation with that id',
        },
      };
      const attempts: [string, string, string][] = [
        [messagesPath(randomUUID()), 'erin', orgA.keys.user],
        [messagesPath('not-a-uuid'), 'erin', orgA.keys.user],
        [messagesPath(anonymous.conversation.id), 'erin', orgA.keys.user],
        [messagesPath(erins.conversation.id), 'mallory', orgA.keys.user],
        [messagesPath(erins.conversation.id), 'erin', orgB.keys.user],
        [messagesPath(erins.conversation.id), 'erin', orgB.keys.full_access],
      ];
      for (const [path, userId, key] of attempts) {
        const reply = await get(path, userId, key);
        expect({ path, userId, status: reply.status, body: reply.body }).toEqual({
          path,
          userId,
          status: 404,
          body: expectedBody,
        });
      }
      // The owner, with either accepted scope, reads it (ids are case-insensitive).
      for (const key of [orgA.keys.user, orgA.keys.full_access]) {
        const own = await get(messagesPath(erins.conversation.id.toUpperCase()), 'erin', key);
        expect(own.status).toBe(200);
        expect(contents(own)).toEqual(['Private to Erin', 'You said: Private to Erin']);
      }
    });
  });

  describe('pagination', () => {
    /** Follows `Link: <…>; rel="next"` until the last page; checks it agrees with x-next-cursor. */
    const allPages = async (firstPath: string, userId: string) => {
      const pages: unknown[][] = [];
      let path: string | null = firstPath;
      while (path !== null) {
        const reply = await get(path, userId);
        expect(reply.status).toBe(200);
        pages.push(reply.body as unknown[]);
        const cursor = reply.headers.get('x-next-cursor');
        const link = reply.headers.get('link');
        if (cursor === null) {
          expect(link).toBeNull();
          path = null;
        } else {
          const match = /^<([^>]+)>; rel="next"$/.exec(link ?? '');
          expect(match).not.toBeNull();
          path = match![1];
          expect(new URL(path, app.baseUrl).searchParams.get('after')).toBe(cursor);
        }
      }
      return pages;
    };

    it('pages through ten thousand conversations, ties in updatedAt included, with nothing lost or repeated', async () => {
      // Ten distinct update times for 10,000 conversations: the cursor must break ties by id.
      await app.dataSource.query(
        `INSERT INTO conversations (id, organization_id, assistant_id, user_id, title, last_response_id, created_at, updated_at)
         SELECT gen_random_uuid(), $1, $2, 'busy', 'Conversation ' || n, NULL,
                timestamptz '2026-01-01T00:00:00Z',
                timestamptz '2026-01-01T00:00:00.000001Z' + (n % 10) * interval '1 minute'
           FROM generate_series(1, 10000) AS n`,
        [orgA.id, orgA.assistantId],
      );
      const first = await get(LIST, 'busy');
      expect(first.body).toHaveLength(20);
      expect(first.headers.get('x-next-cursor')).toEqual(expect.any(String));

      const pages = await allPages(`${LIST}?limit=100`, 'busy');
      expect(pages).toHaveLength(100);
      expect(pages.every((page) => page.length === 100)).toBe(true);
      const all = pages.flat() as { id: string; updatedAt: string }[];
      expect(new Set(all.map((c) => c.id)).size).toBe(10000);
      const times = all.map((c) => Date.parse(c.updatedAt));
      expect([...times].sort((a, b) => b - a)).toEqual(times);
      const [{ count }] = await app.dataSource.query(
        `SELECT count(*)::int AS count FROM conversations WHERE organization_id = $1 AND user_id = 'busy'`,
        [orgA.id],
      );
      expect(count).toBe(10000);
    });

    it('pages through the messages of a long conversation, oldest first', async () => {
      let previous: string | undefined;
      for (const n of [1, 2, 3, 4, 5]) previous = (await turn(`Question ${n}`, 'frank', { previous })).id;
      const [conversation] = (await get(LIST, 'frank')).body as { id: string }[];
      const pages = await allPages(messagesPath(conversation.id, '?limit=4'), 'frank');
      expect(pages.map((page) => page.length)).toEqual([4, 4, 2]);
      expect((pages.flat() as { content: string }[]).map((m) => m.content)).toEqual(
        [1, 2, 3, 4, 5].flatMap((n) => [`Question ${n}`, `You said: Question ${n}`]),
      );
      // An exact multiple of the page size ends with a page that says it is the last.
      const exact = await allPages(messagesPath(conversation.id, '?limit=5'), 'frank');
      expect(exact.map((page) => page.length)).toEqual([5, 5]);
    });

    it('refuses bad limits and cursors with 400 invalid_request', async () => {
      const [conversation] = (await get(LIST, 'frank')).body as { id: string }[];
      const bad = [
        `${LIST}?limit=0`,
        `${LIST}?limit=101`,
        `${LIST}?limit=ten`,
        `${LIST}?limit=1&limit=2`,
        `${LIST}?after=garbage`,
        `${LIST}?after=${Buffer.from('3|4').toString('base64url')}`,
        messagesPath(conversation.id, '?limit=1001'),
        messagesPath(conversation.id, '?after=garbage'),
        messagesPath(
          conversation.id,
          `?after=${Buffer.from('2026-01-01T00:00:00.000000Z|x').toString('base64url')}`,
        ),
        // Only a cursor the endpoint issued, exactly as issued; no operators, no unknown parameters.
        `${LIST}?after[$gt]=x`,
        `${LIST}?after=${encodeURIComponent('garbage=')}`,
        messagesPath(conversation.id, `?after=${Buffer.from('01|0').toString('base64url')}`),
        messagesPath(conversation.id, '?cursor=x'),
      ];
      for (const path of bad) {
        const reply = await get(path, 'frank');
        expect({ path, status: reply.status, code: reply.body.error?.code }).toEqual({
          path,
          status: 400,
          code: 'invalid_request',
        });
      }
    });
  });

  describe('authentication and headers', () => {
    it('needs scope user or full_access, an API key, and x-user-id', async () => {
      const conversation = (await turn('Scoped', 'gina')).conversation.id;
      for (const path of [LIST, messagesPath(conversation)]) {
        const assistantKey = await get(path, 'gina', orgA.keys.assistant);
        expect(assistantKey.status).toBe(403);
        expect(assistantKey.body.error).toMatchObject({
          type: 'authentication_error',
          code: 'insufficient_scope',
        });

        const noKey = await call(app.baseUrl, 'GET', path, { headers: { 'x-user-id': 'gina' } });
        expect(noKey.status).toBe(401);
        expect(noKey.body.error.code).toBe('missing_api_key');

        const noUser = await get(path, undefined);
        expect(noUser.status).toBe(400);
        expect(noUser.body.error).toEqual({
          type: 'invalid_request_error',
          code: 'missing_required_field',
          message: 'Missing required header: x-user-id',
        });
        const tooLong = await get(path, 'x'.repeat(257));
        expect(tooLong.status).toBe(400);
        expect(tooLong.body.error.code).toBe('invalid_request');

        expect((await get(path, 'gina', orgA.keys.full_access)).status).toBe(200);
        expect((await get(path, 'gina', orgA.keys.user)).status).toBe(200);
      }
    });
  });
});
