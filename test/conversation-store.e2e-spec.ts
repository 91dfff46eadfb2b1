import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { AssistantEntity } from '../src/assistants/entities/assistant.entity.js';
import { TransactionalConnection } from '../src/database/transactional-connection.js';
import { OrganizationEntity } from '../src/organizations/entities/organization.entity.js';
import { ConversationStore } from '../src/responses/store/conversation-store.repository.js';
import { TurnStore } from '../src/responses/store/turn-store.repository.js';
import { openTestDataSource, type TestDataSource } from './support/test-data-source.js';
import type { TurnRecord } from '../src/turns/turn.types.js';

/**
 * The Conversations API's SQL against a real (embedded or server) database: a conversation made
 * before any turn, items appended as an assistant-less turn, the thread a `conversation` turn
 * starts from, and the tenant in every query.
 */
describe('ConversationStore (SQL)', () => {
  let database: TestDataSource;
  let dataSource: DataSource;
  let store: ConversationStore;
  let turns: TurnStore;
  const orgA = randomUUID();
  const orgB = randomUUID();
  const asstA = randomUUID();

  beforeAll(async () => {
    database = await openTestDataSource();
    dataSource = database.dataSource;
    store = new ConversationStore(dataSource, new TransactionalConnection(dataSource));
    turns = new TurnStore(dataSource);
    const now = new Date();
    await dataSource.getRepository(OrganizationEntity).insert([
      { id: orgA, slug: `a-${orgA}`, name: 'A', rateLimitPerMinute: null, createdAt: now },
      { id: orgB, slug: `b-${orgB}`, name: 'B', rateLimitPerMinute: null, createdAt: now },
    ]);
    await dataSource.getRepository(AssistantEntity).insert({
      id: asstA,
      organizationId: orgA,
      name: 'a',
      instructions: '',
      model: { provider: 'offline' },
      toolNames: [],
      createdAt: now,
      updatedAt: now,
    });
  });
  afterAll(() => database?.close());

  const append = (conversationId: string, text: string) =>
    store.withTransaction(async (manager) => {
      const conversation = await store.find(orgA, 'u1', conversationId, { manager, lock: true });
      await store.appendItems(
        manager,
        orgA,
        'u1',
        conversation!,
        {
          items: [{ type: 'message', role: 'user', text, id: `msg_${randomUUID().replaceAll('-', '')}` }],
          transcript: [{ role: 'user', content: text }],
          messages: [{ role: 'user', content: text, position: 0 }],
          title: text,
        },
        new Date(),
      );
    });

  function turnAfter(conversationId: string, head: { responseId: string; depth: number } | null): TurnRecord {
    const at = new Date();
    return {
      responseId: randomUUID(),
      organizationId: orgA,
      assistantId: asstA,
      conversationId,
      newConversationTitle: head ? null : 'from the turn',
      previousResponseId: head?.responseId ?? null,
      userId: 'u1',
      status: 'completed',
      depth: (head?.depth ?? 0) + 1,
      activeAgent: null,
      instructions: null,
      input: [{ type: 'message', role: 'user', text: 'question' }],
      output: [],
      outputText: 'answer',
      transcript: [
        { role: 'user', content: 'question' },
        { role: 'assistant', content: 'answer' },
      ],
      usage: null,
      error: null,
      body: null,
      apiKeyId: randomUUID(),
      usageRows: [],
      createdAt: at,
      completedAt: at,
      messages: [{ id: randomUUID(), role: 'user', content: 'question', position: 0, createdAt: at }],
    };
  }

  it('makes a conversation without an assistant; its first turn binds the assistant and the title', async () => {
    const made = await store.withTransaction((manager) =>
      store.create(manager, orgA, 'u1', { k: 'v' }, new Date()),
    );
    expect(made).toMatchObject({ assistantId: null, title: '', lastResponseId: null, metadata: { k: 'v' } });
    expect(await store.loadThread(orgA, 'u1', made.id)).toEqual({ conversation: made, head: null });
    await turns.saveTurn(turnAfter(made.id, null));
    expect(await store.find(orgA, 'u1', made.id)).toMatchObject({
      assistantId: asstA,
      title: 'from the turn',
    });
  });

  it('appends items after the newest turn: the thread a turn starts from includes them, in order', async () => {
    const made = await store.withTransaction((manager) => store.create(manager, orgA, 'u1', {}, new Date()));
    await append(made.id, 'first item');
    const afterItems = await store.loadThread(orgA, 'u1', made.id);
    expect(afterItems!.head).toMatchObject({ depth: 1, conversationId: made.id });
    await turns.saveTurn(turnAfter(made.id, afterItems!.head));
    await append(made.id, 'second item');
    const { conversation, head } = (await store.loadThread(orgA, 'u1', made.id))!;
    expect(conversation.title).toBe('first item');
    expect(head!.depth).toBe(3);
    expect(head!.history.messages()).toEqual([
      { role: 'user', content: 'first item' },
      { role: 'user', content: 'question' },
      { role: 'assistant', content: 'answer' },
      { role: 'user', content: 'second item' },
    ]);
    // The items row is no response.
    expect(await turns.findResponse(orgA, 'u1', head!.responseId)).toBeNull();
    const branch = await store.branchTurns(orgA, made.id, head!.responseId);
    expect(branch.map((turn) => turn.assistantId)).toEqual([null, asstA, null]);
  });

  it('finds, updates and deletes nothing of another organization or user', async () => {
    const made = await store.withTransaction((manager) =>
      store.create(manager, orgA, 'u1', { k: 'v' }, new Date()),
    );
    for (const [org, user] of [
      [orgB, 'u1'],
      [orgA, 'u2'],
      [orgA, null],
    ] as const) {
      expect(await store.find(org, user, made.id)).toBeNull();
      expect(await store.loadThread(org, user, made.id)).toBeNull();
      expect(await store.updateMetadata(org, user, made.id, { k: 'x' })).toBeNull();
      expect(await store.delete(org, user, made.id)).toBe(false);
    }
    expect((await store.find(orgA, 'u1', made.id))!.metadata).toEqual({ k: 'v' });
    expect(await store.delete(orgA, 'u1', made.id)).toBe(true);
    expect(await store.find(orgA, 'u1', made.id)).toBeNull();
  });
});
