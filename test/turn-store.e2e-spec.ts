import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { AssistantEntity } from '../src/assistants/entities/assistant.entity.js';
import { OrganizationEntity } from '../src/organizations/entities/organization.entity.js';
import {
  ChatHistoryRepository,
  type ConversationCursor,
  type MessageCursor,
} from '../src/responses/store/chat-history.repository.js';
import { TurnStore } from '../src/responses/store/turn-store.repository.js';
import { UsageRollups } from '../src/usage/usage-rollups.repository.js';
import { openTestDataSource, type TestDataSource } from './support/test-data-source.js';
import type { TurnRecord } from '../src/turns/turn.types.js';

/**
 * The turn store's SQL against a real (embedded or server) database, without the HTTP layer: the
 * single write of a turn, the thread read along previous_response_id with its tenant checks,
 * branches, chat-history keyset pages and the erase-user deletes.
 */
describe('TurnStore and ChatHistoryRepository (SQL)', () => {
  let database: TestDataSource;
  let dataSource: DataSource;
  let store: TurnStore;
  let history: ChatHistoryRepository;
  const orgA = randomUUID();
  const orgB = randomUUID();
  const asstA = randomUUID();
  const asstA2 = randomUUID();
  const asstB = randomUUID();
  const KEY = randomUUID();

  beforeAll(async () => {
    database = await openTestDataSource();
    dataSource = database.dataSource;
    store = new TurnStore(dataSource);
    history = new ChatHistoryRepository(dataSource);
    const now = new Date();
    await dataSource.getRepository(OrganizationEntity).insert([
      { id: orgA, slug: `a-${orgA}`, name: 'A', rateLimitPerMinute: null, createdAt: now },
      { id: orgB, slug: `b-${orgB}`, name: 'B', rateLimitPerMinute: null, createdAt: now },
    ]);
    const model = { provider: 'offline' as const, functionCalling: true };
    await dataSource.getRepository(AssistantEntity).insert(
      [
        [asstA, orgA],
        [asstA2, orgA],
        [asstB, orgB],
      ].map(([id, organizationId]) => ({
        id,
        organizationId,
        name: id,
        instructions: '',
        model,
        toolNames: [],
        createdAt: now,
        updatedAt: now,
      })),
    );
  });

  afterAll(() => database?.close());

  /** A finished first turn (or, with `previous`, one continuing it) of user `u1` in org A. */
  function turn(overrides: Partial<TurnRecord> & { previous?: TurnRecord } = {}): TurnRecord {
    const { previous, ...rest } = overrides;
    const responseId = randomUUID();
    const at = new Date();
    const text = `question ${responseId.slice(0, 8)}`;
    return {
      responseId,
      organizationId: previous?.organizationId ?? orgA,
      assistantId: previous?.assistantId ?? asstA,
      conversationId: previous?.conversationId ?? randomUUID(),
      newConversationTitle: previous ? null : text,
      previousResponseId: previous?.responseId ?? null,
      userId: previous ? previous.userId : 'u1',
      status: 'completed',
      body: null,
      depth: (previous?.depth ?? 0) + 1,
      activeAgent: null,
      instructions: null,
      input: [{ type: 'message', role: 'user', text }],
      output: [],
      outputText: `answer ${responseId.slice(0, 8)}`,
      transcript: [
        { role: 'user', content: text },
        { role: 'assistant', content: `answer ${responseId.slice(0, 8)}` },
      ],
      usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
      apiKeyId: KEY,
      usageRows: [
        {
          currency: '',
          turns: 1,
          inputTokens: 1,
          cachedTokens: 0,
          outputTokens: 1,
          reasoningTokens: 0,
          cost: 0,
        },
      ],
      error: null,
      createdAt: at,
      completedAt: at,
      messages: [
        { id: randomUUID(), role: 'user', content: text, position: 0, createdAt: at },
        {
          id: randomUUID(),
          role: 'assistant',
          content: `answer ${responseId.slice(0, 8)}`,
          position: 1,
          createdAt: at,
        },
      ],
      ...rest,
    };
  }

  /**
   * Writes a finished turn as the service does: a first turn creates its conversation (here a JSON
   * turn's `turn_insert_new`), a later one moves it on (`turn_save`, which never creates one).
   */
  const save = (record: TurnRecord) =>
    record.previousResponseId === null
      ? store.insertTurn({ ...record, newConversation: true })
      : store.saveTurn(record);

  const countRows = async (table: string, column: string, value: string): Promise<number> => {
    const [row] = await dataSource.query<{ count: number }[]>(
      `SELECT count(*)::integer AS count FROM ${table} WHERE ${column} = $1`,
      [value],
    );
    return row.count;
  };

  describe('saveTurn', () => {
    it('creates the conversation, the response and its messages in one statement', async () => {
      const first = turn();
      await save(first);

      const [conversation] = await dataSource.query<Record<string, unknown>[]>(
        'SELECT organization_id, assistant_id, user_id, title, last_response_id FROM conversations WHERE id = $1',
        [first.conversationId],
      );
      expect(conversation).toEqual({
        organization_id: orgA,
        assistant_id: asstA,
        user_id: 'u1',
        title: first.newConversationTitle,
        last_response_id: first.responseId,
      });
      const stored = await store.findResponse(orgA, 'u1', first.responseId);
      expect(stored).toMatchObject({
        id: first.responseId,
        conversationId: first.conversationId,
        status: 'completed',
        outputText: first.outputText,
        usage: first.usage,
      });
      expect(await countRows('messages', 'response_id', first.responseId)).toBe(2);
    });

    it('a later turn moves the conversation on and keeps its title', async () => {
      const first = turn();
      await save(first);
      const second = turn({ previous: first, completedAt: new Date(first.completedAt.getTime() + 1000) });
      await save(second);

      const [conversation] = await dataSource.query<
        { title: string; last_response_id: string; updated_at: Date }[]
      >('SELECT title, last_response_id, updated_at FROM conversations WHERE id = $1', [
        first.conversationId,
      ]);
      expect(conversation.title).toBe(first.newConversationTitle);
      expect(conversation.last_response_id).toBe(second.responseId);
      expect(conversation.updated_at.getTime()).toBe(second.completedAt.getTime());
    });

    it.each(['saveTurn', 'insertTurn'] as const)(
      '%s writes nothing into a conversation id that belongs to another organization',
      async (write) => {
        const first = turn();
        await save(first);
        const intruder = turn({
          organizationId: orgB,
          assistantId: asstB,
          conversationId: first.conversationId,
        });
        expect(await store[write](intruder)).toBe(false);

        expect(await countRows('responses', 'id', intruder.responseId)).toBe(0);
        expect(await countRows('messages', 'response_id', intruder.responseId)).toBe(0);
        expect(await countRows('usage_pending', 'response_id', intruder.responseId)).toBe(0);
        const [conversation] = await dataSource.query<
          { organization_id: string; last_response_id: string }[]
        >('SELECT organization_id, last_response_id FROM conversations WHERE id = $1', [
          first.conversationId,
        ]);
        expect(conversation).toEqual({ organization_id: orgA, last_response_id: first.responseId });
      },
    );

    it("leaves each turn's usage pending in its statement; a flush adds it to the rollups once, per currency and dimension", async () => {
      const key = randomUUID();
      const priced = (currency: string, tokens: number, cost: number, turns: number) => ({
        currency,
        turns,
        inputTokens: tokens,
        cachedTokens: 1,
        outputTokens: tokens * 2,
        reasoningTokens: 1,
        cost,
      });
      const first = turn({ apiKeyId: key, usageRows: [priced('USD', 10, 0.5, 1), priced('', 3, 0, 0)] });
      const second = turn({ previous: first, apiKeyId: key, usageRows: [priced('USD', 5, 0.25, 1)] });
      const specialist = turn({ apiKeyId: key, activeAgent: 'billing', usageRows: [priced('USD', 7, 1, 1)] });
      const intruder = turn({
        organizationId: orgB,
        assistantId: asstB,
        conversationId: first.conversationId,
        apiKeyId: key,
        usageRows: [priced('USD', 1000, 1000, 1)],
      });
      const records = [first, second, specialist, intruder];
      for (const record of records) await (record === intruder ? store.saveTurn(record) : save(record));
      const daily = () =>
        dataSource.query<Record<string, unknown>[]>(
          `SELECT organization_id, specialist, user_id, currency, turns::int, input_tokens::int, cached_tokens::int,
                  output_tokens::int, reasoning_tokens::int, cost::float AS cost
             FROM usage_daily WHERE api_key_id = $1 ORDER BY specialist, currency`,
          [key],
        );
      // The turns' statements touched no rollup row: their usage waits in usage_pending (not the intruder's).
      expect(await daily()).toEqual([]);
      const pending = await dataSource.query<{ response_id: string }[]>(
        'SELECT response_id FROM usage_pending WHERE api_key_id = $1 ORDER BY completed_at',
        [key],
      );
      expect(pending.map((row) => row.response_id).sort()).toEqual(
        [first, second, specialist].map((record) => record.responseId).sort(),
      );

      const rollups = new UsageRollups(dataSource);
      const ids = records.map((record) => record.responseId);
      expect(await rollups.flush(ids)).toBe(3);
      // A second flush of the same turns (another replica's, or a retry) adds nothing.
      expect(await rollups.flush(ids)).toBe(0);
      expect(await countRows('usage_pending', 'api_key_id', key)).toBe(0);
      const [hourly] = await dataSource.query<{ turns: number; input_tokens: number; cost: number }[]>(
        `SELECT sum(turns)::int AS turns, sum(input_tokens)::int AS input_tokens, sum(cost)::float AS cost
           FROM usage_hourly WHERE api_key_id = $1`,
        [key],
      );
      expect(hourly).toEqual({ turns: 3, input_tokens: 25, cost: 1.75 });
      const rows = await daily();
      expect(rows).toEqual([
        {
          organization_id: orgA,
          specialist: '',
          user_id: 'u1',
          currency: '',
          turns: 0,
          input_tokens: 3,
          cached_tokens: 1,
          output_tokens: 6,
          reasoning_tokens: 1,
          cost: 0,
        },
        {
          organization_id: orgA,
          specialist: '',
          user_id: 'u1',
          currency: 'USD',
          turns: 2,
          input_tokens: 15,
          cached_tokens: 2,
          output_tokens: 30,
          reasoning_tokens: 2,
          cost: 0.75,
        },
        {
          organization_id: orgA,
          specialist: 'billing',
          user_id: 'u1',
          currency: 'USD',
          turns: 1,
          input_tokens: 7,
          cached_tokens: 1,
          output_tokens: 14,
          reasoning_tokens: 1,
          cost: 1,
        },
      ]);
    });

    it('stores a whole turn without a start row in one statement of INSERTs: new conversation or continued', async () => {
      const first = turn({ newConversation: true });
      await store.insertTurn(first);
      const second = turn({ previous: first, completedAt: new Date(first.completedAt.getTime() + 1000) });
      await store.insertTurn(second);

      const [conversation] = await dataSource.query<Record<string, unknown>[]>(
        'SELECT organization_id, title, last_response_id FROM conversations WHERE id = $1',
        [first.conversationId],
      );
      expect(conversation).toEqual({
        organization_id: orgA,
        title: first.newConversationTitle,
        last_response_id: second.responseId,
      });
      for (const record of [first, second]) {
        expect(await store.findResponse(orgA, 'u1', record.responseId)).toMatchObject({
          status: 'completed',
          outputText: record.outputText,
          completedAt: record.completedAt,
        });
        expect(await countRows('messages', 'response_id', record.responseId)).toBe(2);
        expect(await countRows('usage_pending', 'response_id', record.responseId)).toBe(1);
      }
      // No ON CONFLICT: a response id stored already is never overwritten. A replay of the turn's own
      // write (same tenant, same outcome: a retry after a lost reply) counts as done; any other fails.
      await expect(store.insertTurn({ ...second, status: 'failed', outputText: 'other' })).rejects.toThrow();
      await expect(store.insertTurn({ ...second, outputText: 'other' })).resolves.toBe(true);
      expect((await store.findResponse(orgA, 'u1', second.responseId))?.outputText).toBe(second.outputText);
      expect(await countRows('messages', 'response_id', second.responseId)).toBe(2);
    });

    it('is atomic: a failing message insert stores neither the response nor the conversation', async () => {
      const broken = turn();
      // Two messages with one id violate the primary key inside the single statement.
      broken.messages[1].id = broken.messages[0].id;
      await expect(save(broken)).rejects.toThrow();

      expect(await countRows('responses', 'id', broken.responseId)).toBe(0);
      expect(await countRows('conversations', 'id', broken.conversationId)).toBe(0);
    });
  });

  describe('loadThread', () => {
    it('walks previous_response_id to the first turn, transcripts oldest first', async () => {
      const first = turn();
      const second = turn({ previous: first, activeAgent: 'billing' });
      const third = turn({
        previous: second,
        status: 'requires_action',
        output: [
          {
            type: 'function_call',
            id: 'fc_1',
            call_id: 'call_1',
            name: 'f',
            arguments: '{}',
            status: 'completed',
          },
        ],
      });
      for (const record of [first, second, third]) await save(record);

      const thread = await store.loadThread(orgA, asstA, 'u1', third.responseId);
      expect(thread).toEqual({
        responseId: third.responseId,
        conversationId: first.conversationId,
        depth: 3,
        status: 'requires_action',
        output: third.output,
        activeAgent: null,
        history: expect.anything(),
        complete: true,
      });
      expect(thread!.history.messages()).toEqual([
        ...first.transcript,
        ...second.transcript,
        ...third.transcript,
      ]);
      expect((await store.loadThread(orgA, asstA, 'u1', second.responseId))?.activeAgent).toBe('billing');
    });

    it('finds nothing for another organization, assistant or user', async () => {
      const first = turn();
      await save(first);

      expect(await store.loadThread(orgB, asstA, 'u1', first.responseId)).toBeNull();
      expect(await store.loadThread(orgA, asstA2, 'u1', first.responseId)).toBeNull();
      expect(await store.loadThread(orgA, asstA, 'u2', first.responseId)).toBeNull();
      expect(await store.loadThread(orgA, asstA, null, first.responseId)).toBeNull();
      expect(await store.loadThread(orgA, asstA, 'u1', randomUUID())).toBeNull();
      expect(await store.findResponse(orgB, 'u1', first.responseId)).toBeNull();
      expect(await store.findResponse(orgA, 'u2', first.responseId)).toBeNull();
      expect(await store.findResponse(orgA, null, first.responseId)).toBeNull();
    });

    it('continues an anonymous thread only anonymously', async () => {
      const anonymous = turn({ userId: null });
      await save(anonymous);

      expect((await store.loadThread(orgA, asstA, null, anonymous.responseId))?.responseId).toBe(
        anonymous.responseId,
      );
      expect(await store.loadThread(orgA, asstA, 'u1', anonymous.responseId)).toBeNull();
    });
  });

  it('stores two branches from one response written at once; each branch reads only its own turns', async () => {
    const root = turn();
    await save(root);
    const left = turn({ previous: root });
    const right = turn({ previous: root });
    await Promise.all([save(left), save(right)]);

    const leftThread = await store.loadThread(orgA, asstA, 'u1', left.responseId);
    const rightThread = await store.loadThread(orgA, asstA, 'u1', right.responseId);
    expect(leftThread?.history.messages()).toEqual([...root.transcript, ...left.transcript]);
    expect(rightThread?.history.messages()).toEqual([...root.transcript, ...right.transcript]);
    expect(leftThread?.depth).toBe(2);
    expect(rightThread?.depth).toBe(2);

    const conversation = await history.findForUser(orgA, 'u1', root.conversationId);
    expect([left.responseId, right.responseId]).toContain(conversation?.lastResponseId);
    const messages = await history.listBranchMessages(orgA, root.conversationId, left.responseId, null, 100);
    expect(messages.map((message) => message.content)).toEqual([
      ...root.messages.map((message) => message.content),
      ...left.messages.map((message) => message.content),
    ]);
  });

  describe('chat history keyset pages', () => {
    it('lists a user’s conversations newest first, ties broken by id, with no gap or repeat across pages', async () => {
      const tiedAt = new Date(Date.now() + 60_000);
      const user = `pager-${randomUUID()}`;
      const records = Array.from({ length: 5 }, () => turn({ userId: user, completedAt: tiedAt }));
      records.push(
        turn({ userId: user, assistantId: asstA2, completedAt: new Date(tiedAt.getTime() - 1000) }),
      );
      for (const record of records) await save(record);
      // Another user's and an anonymous conversation are never listed.
      await save(turn({ userId: 'someone-else', completedAt: tiedAt }));
      await save(turn({ userId: null, completedAt: tiedAt }));

      const seen: string[] = [];
      let after: ConversationCursor | null = null;
      for (;;) {
        const page = await history.listForUser(orgA, user, null, after, 2);
        seen.push(...page.map((conversation) => conversation.id));
        if (page.length < 2) break;
        after = page[page.length - 1].cursor;
      }
      const tied = records.slice(0, 5).map((record) => record.conversationId);
      expect(seen).toEqual([...tied.sort().reverse(), records[5].conversationId]);

      const narrowed = await history.listForUser(orgA, user, asstA2, null, 10);
      expect(narrowed.map((conversation) => conversation.id)).toEqual([records[5].conversationId]);
      expect(await history.listForUser(orgB, user, null, null, 10)).toEqual([]);
    });

    it('pages a branch’s messages oldest first from a cursor', async () => {
      const first = turn({ userId: 'u3' });
      const second = turn({ previous: first });
      await save(first);
      await save(second);

      const all = await history.listBranchMessages(orgA, first.conversationId, second.responseId, null, 100);
      expect(all.map((message) => message.cursor)).toEqual([
        { depth: 1, position: 0 },
        { depth: 1, position: 1 },
        { depth: 2, position: 0 },
        { depth: 2, position: 1 },
      ]);
      const after: MessageCursor = all[1].cursor;
      const rest = await history.listBranchMessages(
        orgA,
        first.conversationId,
        second.responseId,
        after,
        100,
      );
      expect(rest.map((message) => message.id)).toEqual(all.slice(2).map((message) => message.id));
      expect(
        await history.listBranchMessages(orgB, first.conversationId, second.responseId, null, 100),
      ).toEqual([]);
    });
  });

  it('erases one user’s conversations, responses and messages in one organization only', async () => {
    const user = `erase-${randomUUID()}`;
    const mine = turn({ userId: user });
    const mineLater = turn({ previous: mine });
    const otherOrg = turn({ userId: user, organizationId: orgB, assistantId: asstB });
    const otherUser = turn({ userId: `${user}-other` });
    for (const record of [mine, mineLater, otherOrg, otherUser]) await save(record);

    const erased = await dataSource.transaction((manager) => store.eraseUserHistory(manager, orgA, user));
    expect(erased).toEqual({ conversations: 1, responses: 2, messages: 4 });
    expect(await countRows('conversations', 'id', mine.conversationId)).toBe(0);
    expect(await countRows('responses', 'id', otherOrg.responseId)).toBe(1);
    expect(await countRows('responses', 'id', otherUser.responseId)).toBe(1);
  });
});
