import { AssistantsService } from '../src/assistants/assistants.service.js';
import { MemoryRepository } from '../src/memory/memory.repository.js';
import { MemoryService } from '../src/memory/memory.service.js';
import { call } from './support/http.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

interface ItemRow {
  id: string;
  organization_id: string;
  user_id: string;
  assistant_id: string;
  content: string;
}

describe('memory endpoints', () => {
  let app: TestApp;
  let memory: MemoryService;
  let orgA: SeededOrganization;
  let orgB: SeededOrganization;
  /** A second assistant of organization A. */
  let otherAssistantId: string;

  beforeAll(async () => {
    app = await startTestApp();
    memory = app.running.app.get(MemoryService);
    orgA = await app.seedOrganization('memory-a');
    orgB = await app.seedOrganization('memory-b');
    otherAssistantId = (
      await app.running.app
        .get(AssistantsService)
        .create(orgA.id, { name: 'second', model: { provider: 'offline' } })
    ).id;
  });
  afterAll(async () => {
    await app?.close();
  });

  const items = (where = 'true', parameters: unknown[] = []): Promise<ItemRow[]> =>
    app.dataSource.query(
      `SELECT id, organization_id, user_id, assistant_id, content FROM memory_items WHERE ${where}
        ORDER BY created_at, id`,
      parameters,
    );
  const itemsOf = (organizationId: string, userId: string) =>
    items('organization_id = $1 AND user_id = $2', [organizationId, userId]);
  const optOutsOf = (organizationId: string, userId: string): Promise<{ assistant_id: string | null }[]> =>
    app.dataSource.query(
      'SELECT assistant_id FROM memory_opt_outs WHERE organization_id = $1 AND user_id = $2 ORDER BY assistant_id',
      [organizationId, userId],
    );
  const request = (method: string, path: string, userId: string | undefined, key = orgA.keys.user) =>
    call(app.baseUrl, method, path, { key, headers: userId === undefined ? {} : { 'x-user-id': userId } });
  /** Saves as the model would, one after another so creation times are distinct and ordered. */
  const remember = async (
    userId: string,
    notes: string[],
    assistantId = orgA.assistantId,
    organizationId = orgA.id,
  ) => {
    const ids: string[] = [];
    for (const note of notes) {
      const result = await memory.saveFromModel(organizationId, userId, assistantId, note);
      expect(result.saved).toBe(true);
      ids.push(result.id!);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    return ids;
  };

  describe('GET /v1/memory', () => {
    it('lists the user’s items newest first with the opt-out state', async () => {
      const [first, second] = await remember('lister', ['likes tea', 'lives in Lyon']);
      const [third] = await remember('lister', ['prefers French'], otherAssistantId);
      const res = await request('GET', '/v1/memory', 'lister');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        object: 'list',
        data: [
          {
            id: `mem_${third}`,
            assistantId: `asst_${otherAssistantId}`,
            content: 'prefers French',
            createdAt: expect.any(String),
          },
          {
            id: `mem_${second}`,
            assistantId: `asst_${orgA.assistantId}`,
            content: 'lives in Lyon',
            createdAt: expect.any(String),
          },
          {
            id: `mem_${first}`,
            assistantId: `asst_${orgA.assistantId}`,
            content: 'likes tea',
            createdAt: expect.any(String),
          },
        ],
        hasMore: false,
        nextCursor: null,
        optedOut: false,
      });
      const times = res.body.data.map((item: { createdAt: string }) => Date.parse(item.createdAt));
      expect([...times].sort((a, b) => b - a)).toEqual(times);
    });

    it('narrows to one assistant with assistant_id, bare or asst_-prefixed', async () => {
      for (const assistantId of [
        orgA.assistantId,
        `asst_${orgA.assistantId}`,
        orgA.assistantId.toUpperCase(),
      ]) {
        const res = await request('GET', `/v1/memory?assistant_id=${assistantId}`, 'lister');
        expect(res.status).toBe(200);
        expect(res.body.data.map((item: { content: string }) => item.content)).toEqual([
          'lives in Lyon',
          'likes tea',
        ]);
      }
    });

    it('returns an empty list for a user with no memory', async () => {
      const res = await request('GET', '/v1/memory', 'nobody');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        object: 'list',
        data: [],
        hasMore: false,
        nextCursor: null,
        optedOut: false,
      });
    });

    it('pages with limit and the after cursor, and the cursor survives deleting its item', async () => {
      const ids = await remember(
        'pager',
        Array.from({ length: 7 }, (_, i) => `note ${i}`),
      );
      const newestFirst = [...ids].reverse().map((id) => `mem_${id}`);
      const first = await request('GET', '/v1/memory?limit=3', 'pager');
      expect(first.body.data.map((item: { id: string }) => item.id)).toEqual(newestFirst.slice(0, 3));
      expect(first.body.hasMore).toBe(true);
      expect(typeof first.body.nextCursor).toBe('string');
      // The page boundary is a position, not a row: deleting the last item shown changes nothing.
      expect((await request('DELETE', `/v1/memory/${newestFirst[2]}`, 'pager')).status).toBe(204);
      const second = await request('GET', `/v1/memory?limit=3&after=${first.body.nextCursor}`, 'pager');
      expect(second.body.data.map((item: { id: string }) => item.id)).toEqual(newestFirst.slice(3, 6));
      expect(second.body.hasMore).toBe(true);
      const third = await request('GET', `/v1/memory?limit=3&after=${second.body.nextCursor}`, 'pager');
      expect(third.body.data.map((item: { id: string }) => item.id)).toEqual(newestFirst.slice(6));
      expect(third.body).toMatchObject({ hasMore: false, nextCursor: null });
      const all = await request('GET', '/v1/memory?limit=100', 'pager');
      expect(all.body.data).toHaveLength(6);
    });

    it('defaults to 20 items a page', async () => {
      await remember(
        'many',
        Array.from({ length: 21 }, (_, i) => `fact ${i}`),
      );
      const res = await request('GET', '/v1/memory', 'many');
      expect(res.body.data).toHaveLength(20);
      expect(res.body.hasMore).toBe(true);
    });

    it.each([
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=ten', 'limit'],
      ['limit=1&limit=2', 'limit'],
      ['after=not-a-cursor', 'after'],
      ['after[$gt]=x', 'after[$gt]'],
      [
        'after=' +
          Buffer.from('2026-01-01T00:00:00Z|00000000-0000-4000-8000-000000000000').toString('base64url'),
        'after',
      ],
      ['assistant_id=asst_123', 'assistant_id'],
      ['assistant_id=not-a-uuid', 'assistant_id'],
    ])('refuses ?%s with 400 invalid_request', async (query, mention) => {
      const res = await request('GET', `/v1/memory?${query}`, 'lister');
      expect(res.status).toBe(400);
      expect(res.body.error).toEqual({
        type: 'invalid_request_error',
        code: 'invalid_request',
        message: expect.stringContaining(mention),
      });
    });
  });

  describe('x-user-id, scope and assistant checks', () => {
    it.each([
      ['GET', '/v1/memory'],
      ['DELETE', '/v1/memory'],
      ['DELETE', '/v1/memory/mem_00000000-0000-4000-8000-000000000000'],
      ['POST', '/v1/memory/opt-out'],
      ['DELETE', '/v1/memory/opt-out'],
    ])(
      '%s %s needs x-user-id (400 missing_required_field), a key and the user scope',
      async (method, path) => {
        const missing = await request(method, path, undefined);
        expect(missing.status).toBe(400);
        expect(missing.body.error).toEqual({
          type: 'invalid_request_error',
          code: 'missing_required_field',
          message: expect.stringContaining('x-user-id'),
        });
        const tooLong = await request(method, path, 'u'.repeat(257));
        expect(tooLong.status).toBe(400);
        expect(tooLong.body.error.code).toBe('invalid_request');
        const anonymous = await call(app.baseUrl, method, path, { headers: { 'x-user-id': 'someone' } });
        expect(anonymous.status).toBe(401);
        const wrongScope = await request(method, path, 'someone', orgA.keys.assistant);
        expect(wrongScope.status).toBe(403);
        expect(wrongScope.body.error.code).toBe('insufficient_scope');
        expect(wrongScope.body.error.message).toContain('"user"');
        const fullAccess = await request(method, path, 'someone', orgA.keys.full_access);
        expect(fullAccess.status).toBeLessThan(500);
        expect([401, 403]).not.toContain(fullAccess.status);
      },
    );

    it.each([
      ['GET', '/v1/memory'],
      ['DELETE', '/v1/memory'],
      ['DELETE', '/v1/memory/mem_00000000-0000-4000-8000-000000000000'],
      ['POST', '/v1/memory/opt-out'],
      ['DELETE', '/v1/memory/opt-out'],
    ])(
      '%s %s answers 404 assistant_not_found for an assistant_id of no assistant of the key’s organization',
      async (method, path) => {
        for (const assistantId of ['00000000-0000-4000-8000-000000000000', orgB.assistantId]) {
          const res = await request(method, `${path}?assistant_id=${assistantId}`, 'someone');
          expect(res.status).toBe(404);
          expect(res.body.error).toMatchObject({ type: 'not_found_error', code: 'assistant_not_found' });
        }
        expect(await optOutsOf(orgA.id, 'someone')).toEqual([]);
      },
    );
  });

  describe('deletion', () => {
    it('DELETE /v1/memory/:itemId erases one item for real; 404 memory_item_not_found afterwards', async () => {
      const [keep, drop] = await remember('deleter', ['keep me', 'drop me']);
      const res = await request('DELETE', `/v1/memory/mem_${drop}`, 'deleter');
      expect(res.status).toBe(204);
      expect(res.body).toBeUndefined();
      expect((await itemsOf(orgA.id, 'deleter')).map((row) => row.id)).toEqual([keep]);
      const again = await request('DELETE', `/v1/memory/mem_${drop}`, 'deleter');
      expect(again.status).toBe(404);
      expect(again.body.error).toEqual({
        type: 'not_found_error',
        code: 'memory_item_not_found',
        message: expect.any(String),
      });
      expect((await request('DELETE', '/v1/memory/not-an-id', 'deleter')).body.error.code).toBe(
        'memory_item_not_found',
      );
      // The bare UUID names the same item.
      expect((await request('DELETE', `/v1/memory/${keep}`, 'deleter')).status).toBe(204);
      expect(await itemsOf(orgA.id, 'deleter')).toEqual([]);
    });

    it('DELETE /v1/memory/:itemId with assistant_id only matches that assistant’s item', async () => {
      const [item] = await remember('narrow-deleter', ['kept'], otherAssistantId);
      const res = await request(
        'DELETE',
        `/v1/memory/mem_${item}?assistant_id=${orgA.assistantId}`,
        'narrow-deleter',
      );
      expect(res.status).toBe(404);
      expect(await itemsOf(orgA.id, 'narrow-deleter')).toHaveLength(1);
    });

    it('DELETE /v1/memory erases all of the user’s items, or one assistant’s, and says how many', async () => {
      await remember('wiper', ['a1', 'a2', 'a3']);
      await remember('wiper', ['b1'], otherAssistantId);
      const narrowed = await request('DELETE', `/v1/memory?assistant_id=asst_${otherAssistantId}`, 'wiper');
      expect(narrowed.status).toBe(200);
      expect(narrowed.body).toEqual({ deleted: 1 });
      expect((await itemsOf(orgA.id, 'wiper')).map((row) => row.content)).toEqual(['a1', 'a2', 'a3']);
      const all = await request('DELETE', '/v1/memory', 'wiper');
      expect(all.body).toEqual({ deleted: 3 });
      expect(await itemsOf(orgA.id, 'wiper')).toEqual([]);
      expect((await request('DELETE', '/v1/memory', 'wiper')).body).toEqual({ deleted: 0 });
    });
  });

  describe('opt-out', () => {
    it('stops saving and loading for every assistant until undone, keeping existing items', async () => {
      await remember('shy', ['before opt-out']);
      const res = await request('POST', '/v1/memory/opt-out', 'shy');
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ optedOut: true, assistantId: null });
      expect(await optOutsOf(orgA.id, 'shy')).toEqual([{ assistant_id: null }]);
      // Idempotent.
      expect((await request('POST', '/v1/memory/opt-out', 'shy')).status).toBe(200);
      expect(await optOutsOf(orgA.id, 'shy')).toHaveLength(1);

      for (const assistantId of [orgA.assistantId, otherAssistantId]) {
        expect(await memory.saveFromModel(orgA.id, 'shy', assistantId, 'after opt-out')).toEqual({
          saved: false,
          reason: 'opted_out',
        });
      }
      expect((await itemsOf(orgA.id, 'shy')).map((row) => row.content)).toEqual(['before opt-out']);
      const listed = await request('GET', '/v1/memory', 'shy');
      expect(listed.body.optedOut).toBe(true);
      expect(listed.body.data).toHaveLength(1);
      expect((await request('GET', `/v1/memory?assistant_id=${otherAssistantId}`, 'shy')).body.optedOut).toBe(
        true,
      );

      const undone = await request('DELETE', '/v1/memory/opt-out', 'shy');
      expect(undone.status).toBe(200);
      expect(undone.body).toEqual({ optedOut: false, assistantId: null });
      expect(await optOutsOf(orgA.id, 'shy')).toEqual([]);
      expect((await memory.saveFromModel(orgA.id, 'shy', orgA.assistantId, 'after opt-in')).saved).toBe(true);
      expect((await request('GET', '/v1/memory', 'shy')).body.optedOut).toBe(false);
    });

    it('can be limited to one assistant', async () => {
      const res = await request('POST', `/v1/memory/opt-out?assistant_id=asst_${otherAssistantId}`, 'picky');
      expect(res.body).toEqual({ optedOut: true, assistantId: `asst_${otherAssistantId}` });
      expect((await memory.saveFromModel(orgA.id, 'picky', otherAssistantId, 'no')).saved).toBe(false);
      expect((await memory.saveFromModel(orgA.id, 'picky', orgA.assistantId, 'yes')).saved).toBe(true);
      expect(
        (await request('GET', `/v1/memory?assistant_id=${otherAssistantId}`, 'picky')).body.optedOut,
      ).toBe(true);
      expect(
        (await request('GET', `/v1/memory?assistant_id=${orgA.assistantId}`, 'picky')).body.optedOut,
      ).toBe(false);
      // Without assistant_id the list reports the opt-out of every assistant, which this is not.
      expect((await request('GET', '/v1/memory', 'picky')).body.optedOut).toBe(false);
      const undone = await request('DELETE', `/v1/memory/opt-out?assistant_id=${otherAssistantId}`, 'picky');
      expect(undone.body).toEqual({ optedOut: false, assistantId: `asst_${otherAssistantId}` });
      expect((await memory.saveFromModel(orgA.id, 'picky', otherAssistantId, 'now yes')).saved).toBe(true);
    });

    it('reports that an opt-out of every assistant outlives undoing one assistant’s', async () => {
      await request('POST', '/v1/memory/opt-out', 'layered');
      await request('POST', `/v1/memory/opt-out?assistant_id=${otherAssistantId}`, 'layered');
      const undone = await request(
        'DELETE',
        `/v1/memory/opt-out?assistant_id=${otherAssistantId}`,
        'layered',
      );
      expect(undone.body).toEqual({ optedOut: true, assistantId: `asst_${otherAssistantId}` });
      expect(await optOutsOf(orgA.id, 'layered')).toEqual([{ assistant_id: null }]);
      // Undoing without assistant_id clears every opt-out of the user.
      await request('POST', `/v1/memory/opt-out?assistant_id=${otherAssistantId}`, 'layered');
      expect((await request('DELETE', '/v1/memory/opt-out', 'layered')).body.optedOut).toBe(false);
      expect(await optOutsOf(orgA.id, 'layered')).toEqual([]);
    });
  });

  describe('tenant boundaries', () => {
    const owner = 'memory-owner';
    let ownerItems: string[];

    beforeAll(async () => {
      ownerItems = await remember(owner, ['owner secret one', 'owner secret two']);
    });

    const ownerUntouched = async () => {
      expect((await itemsOf(orgA.id, owner)).map((row) => row.id)).toEqual(ownerItems);
      expect(await optOutsOf(orgA.id, owner)).toEqual([]);
      expect((await memory.saveFromModel(orgA.id, owner, orgA.assistantId, 'owner secret one')).saved).toBe(
        true,
      );
    };

    it.each([
      ['another organization’s key, same user id', () => ({ key: orgB.keys.user, userId: owner })],
      [
        'another organization’s full_access key, same user id',
        () => ({ key: orgB.keys.full_access, userId: owner }),
      ],
      ['the same organization, another user id', () => ({ key: orgA.keys.user, userId: 'memory-intruder' })],
    ])('%s sees nothing and changes nothing', async (_label, who) => {
      const { key, userId } = who();
      const listed = await request('GET', '/v1/memory', userId, key);
      expect(listed.status).toBe(200);
      expect(listed.body.data).toEqual([]);
      expect(listed.body.optedOut).toBe(false);
      for (const id of ownerItems) {
        for (const path of [`/v1/memory/mem_${id}`, `/v1/memory/${id}`]) {
          const deleted = await request('DELETE', path, userId, key);
          expect(deleted.status).toBe(404);
          expect(deleted.body.error.code).toBe('memory_item_not_found');
        }
      }
      expect((await request('DELETE', '/v1/memory', userId, key)).body).toEqual({ deleted: 0 });
      expect((await request('POST', '/v1/memory/opt-out', userId, key)).status).toBe(200);
      await ownerUntouched();
      expect((await request('DELETE', '/v1/memory/opt-out', userId, key)).status).toBe(200);
      await ownerUntouched();
    });

    it('an opt-out of the owner is not undone from another organization or user', async () => {
      await request('POST', '/v1/memory/opt-out', owner);
      expect((await request('DELETE', '/v1/memory/opt-out', owner, orgB.keys.user)).body.optedOut).toBe(
        false,
      );
      expect((await request('DELETE', '/v1/memory/opt-out', 'memory-intruder')).body.optedOut).toBe(false);
      expect(await optOutsOf(orgA.id, owner)).toEqual([{ assistant_id: null }]);
      expect((await request('GET', '/v1/memory', owner)).body.optedOut).toBe(true);
      await request('DELETE', '/v1/memory/opt-out', owner);
    });

    it('another organization’s items for the same user id stay out of the owner’s list', async () => {
      await remember(owner, ['org B note'], orgB.assistantId, orgB.id);
      const listed = await request('GET', '/v1/memory', owner);
      expect(listed.body.data.map((item: { content: string }) => item.content)).not.toContain('org B note');
      const fromB = await request('GET', '/v1/memory', owner, orgB.keys.user);
      expect(fromB.body.data.map((item: { content: string }) => item.content)).toEqual(['org B note']);
    });
  });

  describe('saveFromModel', () => {
    it('caps the length at 2,000 characters and refuses empty notes', async () => {
      const exact = await memory.saveFromModel(orgA.id, 'capped', orgA.assistantId, '🎉'.repeat(2000));
      expect(exact.saved).toBe(true);
      expect(await memory.saveFromModel(orgA.id, 'capped', orgA.assistantId, 'x'.repeat(2001))).toEqual({
        saved: false,
        reason: 'too_long',
      });
      expect(await memory.saveFromModel(orgA.id, 'capped', orgA.assistantId, '  \n ')).toEqual({
        saved: false,
        reason: 'empty',
      });
      expect(await itemsOf(orgA.id, 'capped')).toHaveLength(1);
    });

    it('stores a repeated note once, trimmed and without NUL characters', async () => {
      const first = await memory.saveFromModel(orgA.id, 'repeat', orgA.assistantId, '  likes jazz\u0000 ');
      const second = await memory.saveFromModel(orgA.id, 'repeat', orgA.assistantId, 'likes jazz');
      expect(second).toEqual(first);
      expect((await itemsOf(orgA.id, 'repeat')).map((row) => row.content)).toEqual(['likes jazz']);
    });
  });

  it('erases every memory item and opt-out of one user of one organization inside a transaction', async () => {
    await remember('erase-me', ['one', 'two']);
    await remember('erase-me', ['three'], otherAssistantId);
    await request('POST', `/v1/memory/opt-out?assistant_id=${otherAssistantId}`, 'erase-me');
    await remember('erase-me', ['org B'], orgB.assistantId, orgB.id);
    await request('POST', '/v1/memory/opt-out', 'erase-me', orgB.keys.user);
    await remember('keep-me', ['kept']);
    const repository = app.running.app.get(MemoryRepository);
    const erased = await app.dataSource.transaction((manager) =>
      repository.eraseUserContext(manager, orgA.id, 'erase-me'),
    );
    expect(erased).toEqual({ memoryItems: 3, optOuts: 1 });
    expect(await itemsOf(orgA.id, 'erase-me')).toEqual([]);
    expect(await optOutsOf(orgA.id, 'erase-me')).toEqual([]);
    expect(await itemsOf(orgB.id, 'erase-me')).toHaveLength(1);
    expect(await optOutsOf(orgB.id, 'erase-me')).toHaveLength(1);
    expect(await itemsOf(orgA.id, 'keep-me')).toHaveLength(1);
  });
});
