import { jest } from '@jest/globals';
import pg from 'pg';
import { ClaimsService } from '../src/claims/claims.service.js';
import { MemoryService } from '../src/memory/memory.service.js';
import { UserContextService } from '../src/memory/user-context.service.js';
import type { SeededOrganization, TestApp } from './support/test-app.js';
import { startTwoOrganizations } from './support/two-organizations.js';

/** The per-turn loader, called as a turn calls it, against the real database. */
describe('UserContextService.loadForTurn', () => {
  let app: TestApp;
  let loader: UserContextService;
  let memory: MemoryService;
  let claims: ClaimsService;
  let orgA: SeededOrganization;
  let orgB: SeededOrganization;
  let otherAssistantId: string;

  beforeAll(async () => {
    ({
      app,
      orgA,
      orgB,
      secondAssistantId: otherAssistantId,
    } = await startTwoOrganizations('context', 'other'));
    loader = app.running.app.get(UserContextService);
    memory = app.running.app.get(MemoryService);
    claims = app.running.app.get(ClaimsService);
  });
  afterAll(async () => {
    await app?.close();
  });

  const remember = async (organizationId: string, userId: string, assistantId: string, notes: string[]) => {
    for (const note of notes) {
      expect((await memory.saveFromModel(organizationId, userId, assistantId, note)).saved).toBe(true);
      // Distinct creation times keep "newest first" unambiguous.
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  };

  it('returns the user’s claims by key and this assistant’s memory newest first, in one SQL statement', async () => {
    await claims.upsertMany(orgA.id, [
      { userId: 'ann', claimKey: 'plan', claimValue: 'gold' },
      { userId: 'ann', claimKey: 'address', claimValue: { city: 'Lyon', zip: null } },
    ]);
    await remember(orgA.id, 'ann', orgA.assistantId, ['likes tea', 'has a cat']);
    // The driver's statements, prepared ones included (they bypass TypeORM's logger), that read the
    // user's tables (the service's background work may run statements of its own meanwhile).
    const statements = jest.spyOn(pg.Client.prototype, 'query');
    const textOf = (query: unknown) =>
      typeof query === 'string' ? query : ((query as { text?: string }).text ?? '');
    try {
      const context = await loader.loadForTurn(orgA.id, 'ann', orgA.assistantId, 4000);
      const reads = statements.mock.calls.filter(([query]) =>
        /user_claims|memory_items|memory_opt_outs/.test(textOf(query)),
      );
      expect(reads).toHaveLength(1);
      expect(context).toEqual({
        claims: [
          { claimKey: 'address', claimValue: { city: 'Lyon', zip: null } },
          { claimKey: 'plan', claimValue: 'gold' },
        ],
        memory: [
          { id: expect.any(String), content: 'has a cat', createdAt: expect.any(Date) },
          { id: expect.any(String), content: 'likes tea', createdAt: expect.any(Date) },
        ],
        memoryOptedOut: false,
      });
      expect(context.memory[0].createdAt.getTime()).toBeGreaterThan(context.memory[1].createdAt.getTime());
    } finally {
      statements.mockRestore();
    }
  });

  it('keeps claim values of every JSON type intact', async () => {
    const values = [null, 3, 'text', true, [1, [2]], { a: { b: [] } }];
    await claims.upsertMany(
      orgA.id,
      values.map((claimValue, index) => ({ userId: 'typed', claimKey: `k${index}`, claimValue })),
    );
    const context = await loader.loadForTurn(orgA.id, 'typed', orgA.assistantId, 4000);
    expect(context.claims.map((claim) => claim.claimValue)).toEqual(values);
  });

  it('cuts memory at the budget: the newest items whose lengths add up to at most the budget', async () => {
    // Oldest to newest: 10, 20 and 30 characters.
    await remember(orgA.id, 'budget', orgA.assistantId, ['a'.repeat(10), 'b'.repeat(20), 'c'.repeat(30)]);
    const contents = async (budget: number) =>
      (await loader.loadForTurn(orgA.id, 'budget', orgA.assistantId, budget)).memory.map(
        (item) => item.content[0],
      );
    expect(await contents(60)).toEqual(['c', 'b', 'a']);
    expect(await contents(59)).toEqual(['c', 'b']);
    expect(await contents(50)).toEqual(['c', 'b']);
    expect(await contents(49)).toEqual(['c']);
    expect(await contents(30)).toEqual(['c']);
    // The newest item not fitting ends the list: memory is always the most recent run.
    expect(await contents(29)).toEqual([]);
    expect(await contents(0)).toEqual([]);
  });

  it('counts characters, not bytes or UTF-16 units', async () => {
    await remember(orgA.id, 'emoji', orgA.assistantId, ['🎉🎉🎉']);
    expect((await loader.loadForTurn(orgA.id, 'emoji', orgA.assistantId, 3)).memory).toHaveLength(1);
    expect((await loader.loadForTurn(orgA.id, 'emoji', orgA.assistantId, 2)).memory).toHaveLength(0);
  });

  it('isolates by organization, user and assistant', async () => {
    await claims.upsert(orgA.id, { userId: 'iso', claimKey: 'org', claimValue: 'A' });
    await claims.upsert(orgB.id, { userId: 'iso', claimKey: 'org', claimValue: 'B' });
    await claims.upsert(orgA.id, { userId: 'iso-other', claimKey: 'who', claimValue: 'other user' });
    await remember(orgA.id, 'iso', orgA.assistantId, ['A, main assistant']);
    await remember(orgA.id, 'iso', otherAssistantId, ['A, other assistant']);
    await remember(orgB.id, 'iso', orgB.assistantId, ['B']);
    await remember(orgA.id, 'iso-other', orgA.assistantId, ['other user']);

    const main = await loader.loadForTurn(orgA.id, 'iso', orgA.assistantId, 4000);
    expect(main.claims).toEqual([{ claimKey: 'org', claimValue: 'A' }]);
    expect(main.memory.map((item) => item.content)).toEqual(['A, main assistant']);
    const other = await loader.loadForTurn(orgA.id, 'iso', otherAssistantId, 4000);
    expect(other.claims).toEqual([{ claimKey: 'org', claimValue: 'A' }]);
    expect(other.memory.map((item) => item.content)).toEqual(['A, other assistant']);
    const inB = await loader.loadForTurn(orgB.id, 'iso', orgB.assistantId, 4000);
    expect(inB.claims).toEqual([{ claimKey: 'org', claimValue: 'B' }]);
    expect(inB.memory.map((item) => item.content)).toEqual(['B']);
    // Another organization naming A's assistant still reads only its own rows.
    const crossed = await loader.loadForTurn(orgB.id, 'iso', orgA.assistantId, 4000);
    expect(crossed.memory).toEqual([]);
    expect(crossed.claims).toEqual([{ claimKey: 'org', claimValue: 'B' }]);
    const stranger = await loader.loadForTurn(orgA.id, 'nobody', orgA.assistantId, 4000);
    expect(stranger).toEqual({ claims: [], memory: [], memoryOptedOut: false });
  });

  it('loads no memory after an opt-out of every assistant, but still loads claims', async () => {
    await claims.upsert(orgA.id, { userId: 'opted', claimKey: 'plan', claimValue: 'basic' });
    await remember(orgA.id, 'opted', orgA.assistantId, ['remembered before']);
    await memory.optOut(orgA.id, 'opted', null);
    for (const assistantId of [orgA.assistantId, otherAssistantId]) {
      expect(await loader.loadForTurn(orgA.id, 'opted', assistantId, 4000)).toEqual({
        claims: [{ claimKey: 'plan', claimValue: 'basic' }],
        memory: [],
        memoryOptedOut: true,
      });
    }
    // The same user id in another organization is not opted out.
    expect((await loader.loadForTurn(orgB.id, 'opted', orgB.assistantId, 4000)).memoryOptedOut).toBe(false);
    await memory.optIn(orgA.id, 'opted', null);
    const back = await loader.loadForTurn(orgA.id, 'opted', orgA.assistantId, 4000);
    expect(back.memoryOptedOut).toBe(false);
    expect(back.memory.map((item) => item.content)).toEqual(['remembered before']);
  });

  it('applies an opt-out of one assistant to that assistant only', async () => {
    await remember(orgA.id, 'half', orgA.assistantId, ['main']);
    await remember(orgA.id, 'half', otherAssistantId, ['other']);
    await memory.optOut(orgA.id, 'half', otherAssistantId);
    const main = await loader.loadForTurn(orgA.id, 'half', orgA.assistantId, 4000);
    expect(main).toMatchObject({
      memoryOptedOut: false,
      memory: [expect.objectContaining({ content: 'main' })],
    });
    expect(await loader.loadForTurn(orgA.id, 'half', otherAssistantId, 4000)).toMatchObject({
      memoryOptedOut: true,
      memory: [],
    });
  });
});
