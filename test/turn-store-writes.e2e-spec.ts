import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { AssistantEntity } from '../src/assistants/entities/assistant.entity.js';
import { TransactionalConnection } from '../src/database/transactional-connection.js';
import { OrganizationEntity } from '../src/organizations/entities/organization.entity.js';
import { ConversationStore } from '../src/responses/store/conversation-store.repository.js';
import { StartRecords } from '../src/responses/store/start-records.js';
import { TurnLedger } from '../src/responses/store/turn-ledger.repository.js';
import { TurnStore } from '../src/responses/store/turn-store.repository.js';
import { UsageRollups } from '../src/usage/usage-rollups.repository.js';
import type { TurnRecord, TurnStart } from '../src/turns/turn.types.js';
import { openTestDataSource, type TestDataSource } from './support/test-data-source.js';

/**
 * The turn store's two writers of a `responses` row against a real (embedded or server)
 * database, without the application: the start (StartRecords.record) and the end
 * (TurnStore.saveTurn, or completeTurn after a start known written) share one column map, so the
 * end completes exactly the row the start wrote; the tenant is part of both; and the thread head
 * reads the same through the turn store and the conversation store.
 */
describe('turn store writes: start and end of a turn (SQL)', () => {
  let database: TestDataSource;
  let dataSource: DataSource;
  let store: TurnStore;
  let ledger: TurnLedger;
  let starts: StartRecords;
  let conversations: ConversationStore;
  const orgA = randomUUID();
  const orgB = randomUUID();
  const asstA = randomUUID();
  const asstB = randomUUID();
  const KEY = randomUUID();

  beforeAll(async () => {
    database = await openTestDataSource();
    dataSource = database.dataSource;
    store = new TurnStore(dataSource);
    ledger = new TurnLedger(dataSource);
    starts = new StartRecords(dataSource);
    conversations = new ConversationStore(dataSource, new TransactionalConnection(dataSource));
    const now = new Date();
    await dataSource.getRepository(OrganizationEntity).insert([
      { id: orgA, slug: `a-${orgA}`, name: 'A', rateLimitPerMinute: null, createdAt: now },
      { id: orgB, slug: `b-${orgB}`, name: 'B', rateLimitPerMinute: null, createdAt: now },
    ]);
    await dataSource.getRepository(AssistantEntity).insert(
      [
        [asstA, orgA],
        [asstB, orgB],
      ].map(([id, organizationId]) => ({
        id,
        organizationId,
        name: id,
        instructions: '',
        model: { provider: 'offline' as const, functionCalling: true },
        toolNames: [],
        createdAt: now,
        updatedAt: now,
      })),
    );
  });

  afterAll(async () => {
    starts?.onModuleDestroy();
    await database?.close();
  });

  function start(overrides: Partial<TurnStart> = {}): TurnStart {
    const at = new Date();
    return {
      responseId: randomUUID(),
      organizationId: orgA,
      assistantId: asstA,
      conversationId: randomUUID(),
      newConversationTitle: 'hello',
      previousResponseId: null,
      userId: 'u1',
      status: 'in_progress',
      depth: 1,
      activeAgent: null,
      instructions: 'Be brief.',
      input: [{ type: 'message', role: 'user', text: 'hello' }],
      transcript: [{ role: 'user', content: 'hello' }],
      background: true,
      newConversation: true,
      body: '{"status":"in_progress"}',
      ownerId: 'replica-1',
      leaseMs: 60_000,
      createdAt: at,
      messages: [{ id: randomUUID(), role: 'user', content: 'hello', position: 0, createdAt: at }],
      ...overrides,
    };
  }

  /** A first turn of a new conversation, started and ended (a streamed turn's two writes). */
  async function storedTurn(): Promise<TurnStart> {
    const first = start({ background: false });
    await starts.record(first);
    await store.saveTurn(end(first));
    return first;
  }

  /** The start of the turn that continues `first` in its conversation. */
  function continuing(first: TurnStart, overrides: Partial<TurnStart> = {}): TurnStart {
    return start({
      conversationId: first.conversationId,
      previousResponseId: first.responseId,
      newConversationTitle: null,
      newConversation: false,
      depth: 2,
      ...overrides,
    });
  }

  /** The end of `begun` as the executor writes it after a recorded start: only the reply's message. */
  function end(begun: TurnStart, overrides: Partial<TurnRecord> = {}): TurnRecord {
    const at = new Date(begun.createdAt.getTime() + 1000);
    return {
      ...begun,
      status: 'completed',
      activeAgent: 'generic',
      output: [],
      outputText: 'hi there',
      transcript: [...begun.transcript, { role: 'assistant', content: 'hi there' }],
      usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5 },
      error: null,
      completedAt: at,
      body: '{"status":"completed"}',
      apiKeyId: KEY,
      usageRows: [
        {
          currency: '',
          turns: 1,
          inputTokens: 3,
          cachedTokens: 0,
          outputTokens: 2,
          reasoningTokens: 0,
          cost: 0,
        },
      ],
      messages: [{ id: randomUUID(), role: 'assistant', content: 'hi there', position: 1, createdAt: at }],
      ...overrides,
    };
  }

  const pendingUsage = (id: string) =>
    dataSource.query<{ user_id: string }[]>('SELECT user_id FROM usage_pending WHERE response_id = $1', [id]);

  const responseRow = async (id: string) => {
    const [row] = await dataSource.query<Record<string, unknown>[]>(
      `SELECT organization_id, status, instructions, input, output_text, transcript, usage, body::text AS body,
              background, owner_id, lease_expires_at IS NOT NULL AS leased, completed_at IS NOT NULL AS completed
         FROM responses WHERE id = $1`,
      [id],
    );
    return row;
  };

  /** The two final writes of a recorded start: the upsert, and the UPDATE of the end columns. */
  const writers = ['saveTurn', 'completeTurn'] as const;

  it.each(writers)(
    '%s completes the row its start wrote: the same columns, the lease cleared, messages in order',
    async (writer) => {
      const begun = start();
      await starts.record(begun);
      expect(await responseRow(begun.responseId)).toMatchObject({
        organization_id: orgA,
        status: 'in_progress',
        instructions: 'Be brief.',
        input: begun.input,
        output_text: '',
        background: true,
        owner_id: 'replica-1',
        leased: true,
        completed: false,
        body: '{"status":"in_progress"}',
      });

      // A key of its own: the day's rollup row counts this turn alone.
      const key = randomUUID();
      await expect(store[writer](end(begun, { apiKeyId: key }))).resolves.toBe(true);
      expect(await responseRow(begun.responseId)).toMatchObject({
        status: 'completed',
        instructions: 'Be brief.',
        input: begun.input,
        output_text: 'hi there',
        usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5 },
        background: true,
        leased: false,
        completed: true,
        body: '{"status":"completed"}',
      });
      const messages = await dataSource.query<{ role: string; content: string }[]>(
        'SELECT role, content FROM messages WHERE response_id = $1 ORDER BY position',
        [begun.responseId],
      );
      expect(messages).toEqual([
        { role: 'user', content: 'hello' },
        { role: 'assistant', content: 'hi there' },
      ]);
      // Its usage waits in usage_pending until the replica's flush adds it to the rollups.
      expect(await new UsageRollups(dataSource).flush([begun.responseId])).toBe(1);
      const [usage] = await dataSource.query<{ turns: string; input_tokens: string }[]>(
        'SELECT turns, input_tokens FROM usage_daily WHERE organization_id = $1 AND api_key_id = $2',
        [orgA, key],
      );
      expect(Number(usage.turns)).toBe(1);
      expect(Number(usage.input_tokens)).toBe(3);
    },
  );

  it.each(writers)(
    '%s leaves a cancelled turn as it is: neither the row nor its messages change, no usage',
    async (writer) => {
      const begun = start();
      await starts.record(begun);
      expect(await ledger.cancel(orgA, begun.responseId)).toBe(true);
      await expect(store[writer](end(begun))).resolves.toBe(false);
      expect(await pendingUsage(begun.responseId)).toEqual([]);
      expect(await responseRow(begun.responseId)).toMatchObject({ status: 'cancelled', output_text: '' });
      const [{ count }] = await dataSource.query<{ count: number }[]>(
        'SELECT count(*)::int AS count FROM messages WHERE response_id = $1',
        [begun.responseId],
      );
      expect(count).toBe(1);
    },
  );

  it.each(writers)(
    "%s never completes another organization's row, nor touches its conversation",
    async (writer) => {
      const begun = start();
      await starts.record(begun);
      // The same ids written as organization B's: the tenant is part of both conflict clauses.
      await store[writer](end(begun, { organizationId: orgB, assistantId: asstB, messages: [] })).catch(
        () => undefined,
      );
      expect(await responseRow(begun.responseId)).toMatchObject({
        organization_id: orgA,
        status: 'in_progress',
      });
      const [conversation] = await dataSource.query<{ organization_id: string; last_response_id: string }[]>(
        'SELECT organization_id, last_response_id FROM conversations WHERE id = $1',
        [begun.conversationId],
      );
      expect(conversation).toEqual({ organization_id: orgA, last_response_id: begun.responseId });
    },
  );

  it('a continuing start whose conversation was deleted fails as not found and does not bring it back', async () => {
    const first = await storedTurn();
    await dataSource.query('DELETE FROM conversations WHERE id = $1', [first.conversationId]);
    const second = continuing(first);
    await expect(starts.record(second)).rejects.toMatchObject({ code: 'conversation_not_found' });
    const [counts] = await dataSource.query<{ conversations: number; responses: number }[]>(
      `SELECT (SELECT count(*)::int FROM conversations WHERE id = $1) AS conversations,
              (SELECT count(*)::int FROM responses WHERE id = $2) AS responses`,
      [first.conversationId, second.responseId],
    );
    expect(counts).toEqual({ conversations: 0, responses: 0 });
  });

  it('reads the same thread head through the turn store and the conversation store', async () => {
    const first = await storedTurn();
    const second = continuing(first, {
      input: [{ type: 'message', role: 'user', text: 'again' }],
      transcript: [{ role: 'user', content: 'again' }],
    });
    await starts.record(second);
    await store.saveTurn(end(second, { outputText: 'once more' }));

    const byResponse = await store.loadThread(orgA, asstA, 'u1', second.responseId);
    const byConversation = await conversations.loadThread(orgA, 'u1', first.conversationId);
    expect(byResponse).toMatchObject({
      responseId: second.responseId,
      conversationId: first.conversationId,
      depth: 2,
      status: 'completed',
      activeAgent: 'generic',
      complete: true,
    });
    expect(byResponse?.history.messages().map((message) => message.content)).toEqual([
      'hello',
      'hi there',
      'again',
      'hi there',
    ]);
    expect(byConversation?.head).toEqual(byResponse);
    // Another organization's reader sees neither.
    expect(await store.loadThread(orgB, asstA, 'u1', second.responseId)).toBeNull();
    expect(await conversations.loadThread(orgB, 'u1', first.conversationId)).toBeNull();
  });

  /** The conversation's head: its newest turn. */
  const headOf = async (conversationId: string) =>
    (
      await dataSource.query<{ last_response_id: string }[]>(
        'SELECT last_response_id FROM conversations WHERE id = $1',
        [conversationId],
      )
    )[0].last_response_id;

  it('completeTurn of the turn that started its conversation leaves a newer turn the head', async () => {
    const first = start();
    await starts.record(first);
    // A second turn continues the conversation before the first ends, and ends first.
    const second = continuing(first, { createdAt: new Date(first.createdAt.getTime() + 10) });
    await starts.record(second);
    expect(await store.completeTurn(end(second))).toBe(true);
    expect(await store.completeTurn(end(first))).toBe(true);
    expect(await headOf(first.conversationId)).toBe(second.responseId);
  });

  it('completeTurn of an older turn leaves a newer head whose start time the conversation lacks', async () => {
    const first = await storedTurn();
    const older = continuing(first, { createdAt: new Date(first.createdAt.getTime() + 10) });
    await starts.record(older);
    const newer = continuing(first, { createdAt: new Date(first.createdAt.getTime() + 20) });
    await starts.record(newer);
    // A head written before the conversation kept its start time: the write reads it from the row.
    await dataSource.query('UPDATE conversations SET last_response_created_at = NULL WHERE id = $1', [
      first.conversationId,
    ]);
    expect(await store.completeTurn(end(older))).toBe(true);
    expect(await headOf(first.conversationId)).toBe(newer.responseId);
  });

  it('completeTurn run again after its commit (a lost reply) stores nothing more: one row, one usage', async () => {
    const begun = start();
    await starts.record(begun);
    const ended = end(begun);
    expect(await store.completeTurn(ended)).toBe(true);
    // Not running any more: the retry stores nothing, and says so (the row's own end stands).
    expect(await store.completeTurn(ended)).toBe(false);
    expect(await pendingUsage(begun.responseId)).toEqual([{ user_id: 'u1' }]);
    // What the executor does after a write that stored nothing: the stored usage guards it, no second count.
    expect(await ledger.recordEndedUsage(ended)).toBe(false);
    const [{ count }] = await dataSource.query<{ count: number }[]>(
      'SELECT count(*)::int AS count FROM messages WHERE response_id = $1',
      [begun.responseId],
    );
    expect(count).toBe(2);
  });

  it('completeTurn of a running row whose usage is pending already stores the turn, its usage once', async () => {
    const begun = start();
    await starts.record(begun);
    // The usage of a turn still running, written when its replica closed (TurnLedger.recordEndedUsage).
    expect(await ledger.recordEndedUsage(end(begun))).toBe(true);
    expect(await store.completeTurn(end(begun))).toBe(true);
    expect(await responseRow(begun.responseId)).toMatchObject({
      status: 'completed',
      output_text: 'hi there',
    });
    expect(await pendingUsage(begun.responseId)).toEqual([{ user_id: 'u1' }]);
    expect(await ledger.recordEndedUsage(end(begun))).toBe(false);
  });

  it.each(writers)(
    '%s of a turn whose conversation was deleted meanwhile keeps only its usage, under no user',
    async (writer) => {
      const first = await storedTurn();
      const second = continuing(first);
      await starts.record(second);
      await dataSource.query('DELETE FROM conversations WHERE id = $1', [first.conversationId]);
      await expect(store[writer](end(second))).resolves.toBe(true);
      expect(await responseRow(second.responseId)).toBeUndefined();
      expect(await pendingUsage(second.responseId)).toEqual([{ user_id: '' }]);
    },
  );

  it('saveTurn of a turn whose row was deleted meanwhile writes it again (a start of unknown outcome)', async () => {
    const first = await storedTurn();
    const second = continuing(first);
    await starts.record(second);
    expect(await store.deleteResponse(orgA, 'u1', second.responseId)).toBe(true);
    await expect(store.saveTurn(end(second))).resolves.toBe(true);
    // The upsert makes good a start it cannot tell from a deleted one: the row again, the head.
    expect(await responseRow(second.responseId)).toMatchObject({ status: 'completed', input: second.input });
    const [conversation] = await dataSource.query<{ last_response_id: string }[]>(
      'SELECT last_response_id FROM conversations WHERE id = $1',
      [first.conversationId],
    );
    expect(conversation.last_response_id).toBe(second.responseId);
    expect(await pendingUsage(second.responseId)).toEqual([{ user_id: 'u1' }]);
  });

  it.each([false, true])(
    'completeTurn of a turn whose row was deleted meanwhile stores its usage alone (events: %s)',
    async (withEvents) => {
      const first = await storedTurn();
      const second = continuing(first, { background: withEvents });
      await starts.record(second);
      expect(await store.deleteResponse(orgA, 'u1', second.responseId)).toBe(true);
      const events = withEvents
        ? [[{ sequenceNumber: 0, type: 'response.completed', data: '{"type":"response.completed"}' }]]
        : [];
      // Answered as stored: its client is told its end, as when its conversation was deleted.
      await expect(store.completeTurn(end(second), events)).resolves.toBe(true);
      expect(await responseRow(second.responseId)).toBeUndefined();
      const [conversation] = await dataSource.query<{ last_response_id: string }[]>(
        'SELECT last_response_id FROM conversations WHERE id = $1',
        [first.conversationId],
      );
      expect(conversation.last_response_id).toBe(first.responseId);
      const messages = await dataSource.query('SELECT 1 FROM messages WHERE response_id = $1', [
        second.responseId,
      ]);
      expect(messages).toEqual([]);
      expect(await pendingUsage(second.responseId)).toEqual([{ user_id: 'u1' }]);
      // Run again (a lost reply): still nothing stored, the usage kept once.
      await expect(store.completeTurn(end(second), events)).resolves.toBe(true);
      expect(await pendingUsage(second.responseId)).toEqual([{ user_id: 'u1' }]);
    },
  );

  it('a whole-turn insert replayed after its commit (a lost reply) is the write done: one row, one usage', async () => {
    const begun = start({ background: false });
    const whole = end(begun, {
      messages: [...begun.messages, ...end(begun).messages],
      newConversation: true,
    });
    expect(await store.insertTurn(whole)).toBe(true);
    // The same statement again, as a retry after a lost reply sends it: 23505, yet its row is there.
    await expect(store.insertTurn(whole)).resolves.toBe(true);
    const counts = await dataSource.query<{ responses: number; messages: number; pending: number }[]>(
      `SELECT (SELECT count(*)::int FROM responses WHERE id = $1) AS responses,
              (SELECT count(*)::int FROM messages WHERE response_id = $1) AS messages,
              (SELECT count(*)::int FROM usage_pending WHERE response_id = $1) AS pending`,
      [begun.responseId],
    );
    expect(counts).toEqual([{ responses: 1, messages: 2, pending: 1 }]);
    expect(await responseRow(begun.responseId)).toMatchObject({ organization_id: orgA, status: 'completed' });
  });

  it("a replayed insert is not taken for another tenant's or another outcome's write", async () => {
    const begun = start({ background: false });
    const whole = end(begun, { messages: [], newConversation: true });
    await store.insertTurn(whole);
    // The same id as organization B's: its row is not B's, so the conflict stands.
    await expect(
      store.insertTurn({ ...whole, organizationId: orgB, assistantId: asstB, conversationId: randomUUID() }),
    ).rejects.toThrow();
    // The same turn stored as failed (a failure path's write): the stored row is the completed one.
    await expect(store.insertTurn({ ...whole, status: 'failed' })).rejects.toThrow();
    expect(await responseRow(begun.responseId)).toMatchObject({ organization_id: orgA, status: 'completed' });
  });
});
