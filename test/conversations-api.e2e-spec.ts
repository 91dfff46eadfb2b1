import OpenAI from 'openai';
import { FakeUpstream } from './support/fake-upstream.js';
import { call, type ApiReply } from './support/http.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';
import { sdkClient } from './support/sdk-client.js';

const CONV_ID = /^conv_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const HISTORY = '/v1/chat/history/conversations';

/** The Conversations API with the official SDK (openai 6.x has `client.conversations`). */
describe('the Conversations API', () => {
  let app: TestApp;
  let upstream: FakeUpstream;
  let orgA: SeededOrganization;
  let orgB: SeededOrganization;
  let model: string;
  /** Full-access clients: they may call both /v1/responses and /v1/conversations. */
  let alice: OpenAI;
  let bob: OpenAI;
  let anonymous: OpenAI;
  let otherOrg: OpenAI;

  const client = (key: string, userId?: string) => sdkClient(app.baseUrl, key, userId);

  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    app = await startTestApp({ UPSTREAM_MAX_RETRIES: '0' });
    const upstreamModel = { provider: 'openai-compatible', baseUrl: upstream.url, model: 'fake-model' };
    orgA = await app.seedOrganization('conv-a', upstreamModel);
    orgB = await app.seedOrganization('conv-b', upstreamModel);
    model = `asst_${orgA.assistantId}`;
    alice = client(orgA.keys.full_access, 'alice');
    bob = client(orgA.keys.full_access, 'bob');
    anonymous = client(orgA.keys.full_access);
    otherOrg = client(orgB.keys.full_access, 'alice');
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.stop();
  });

  /** What the model was sent on the last turn, without the system messages. */
  const lastThread = () =>
    (upstream.last.body.messages as { role: string }[]).filter((message) => message.role !== 'system');

  const api = (
    method: string,
    path: string,
    options: { userId?: string; key?: string; body?: unknown } = {},
  ) =>
    call(app.baseUrl, method, path, {
      key: options.key ?? orgA.keys.full_access,
      headers: options.userId === undefined ? {} : { 'x-user-id': options.userId },
      body: options.body,
    });

  const expectError = (reply: ApiReply, status: number, code: string, message: string | RegExp) => {
    expect(reply.status).toBe(status);
    expect(reply.body.error.code).toBe(code);
    if (typeof message === 'string') expect(reply.body.error.message).toBe(message);
    else expect(reply.body.error.message).toMatch(message);
  };

  it('creates, retrieves, updates and deletes a conversation in the OpenAI shapes', async () => {
    const created = await alice.conversations.create({ metadata: { topic: 'tea' } });
    expect(created).toEqual({
      id: expect.stringMatching(CONV_ID),
      object: 'conversation',
      created_at: expect.any(Number),
      metadata: { topic: 'tea' },
    });
    expect(Math.abs(created.created_at - Date.now() / 1000)).toBeLessThan(3600);
    expect(await alice.conversations.retrieve(created.id)).toEqual(created);
    // The bare UUID (chat history's id, the Response object's conversation.id) names it too.
    expect(await alice.conversations.retrieve(created.id.slice('conv_'.length))).toEqual(created);

    const updated = await alice.conversations.update(created.id, {
      metadata: { topic: 'coffee', lang: 'en' },
    });
    expect(updated).toEqual({ ...created, metadata: { topic: 'coffee', lang: 'en' } });
    expect((await alice.conversations.update(created.id, { metadata: null })).metadata).toEqual({});

    expect(await alice.conversations.delete(created.id)).toEqual({
      id: created.id,
      object: 'conversation.deleted',
      deleted: true,
    });
    await expect(alice.conversations.retrieve(created.id)).rejects.toMatchObject({
      status: 404,
      error: { code: 'conversation_not_found', message: `No conversation ${created.id}` },
    });
    const rows = await app.dataSource.query('SELECT 1 FROM conversations WHERE id = $1', [
      created.id.slice('conv_'.length),
    ]);
    expect(rows).toEqual([]);
  });

  it('adds items, lists them in pages both ways, retrieves and deletes one', async () => {
    const conversation = await alice.conversations.create({
      items: [
        { type: 'message', role: 'user', content: 'one' },
        { type: 'message', role: 'assistant', content: 'two' },
      ],
    });
    const added = await alice.conversations.items.create(conversation.id, {
      items: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'three' }] },
        { role: 'developer', content: 'four' },
        { type: 'message', role: 'user', content: 'five' },
      ],
    });
    expect(added).toEqual({
      object: 'list',
      data: [
        expect.objectContaining({
          type: 'message',
          role: 'user',
          content: [{ type: 'input_text', text: 'three' }],
        }),
        expect.objectContaining({
          type: 'message',
          role: 'developer',
          content: [{ type: 'input_text', text: 'four' }],
        }),
        expect.objectContaining({
          type: 'message',
          role: 'user',
          content: [{ type: 'input_text', text: 'five' }],
        }),
      ],
      first_id: added.data[0].id,
      last_id: added.data[2].id,
      has_more: false,
    });
    for (const item of added.data)
      expect(item).toMatchObject({ id: expect.stringMatching(/^msg_/), status: 'completed' });

    const textOf = (item: any) => item.content[0].text as string;
    // Default order is newest first (desc), as OpenAI's; the SDK follows last_id with `after`.
    const firstPage = await alice.conversations.items.list(conversation.id, { limit: 2 });
    expect(firstPage.data.map(textOf)).toEqual(['five', 'four']);
    expect(firstPage.has_more).toBe(true);
    const all: string[] = [];
    for await (const item of alice.conversations.items.list(conversation.id, { limit: 2 }))
      all.push(textOf(item));
    expect(all).toEqual(['five', 'four', 'three', 'two', 'one']);
    const ascending: any[] = [];
    for await (const item of alice.conversations.items.list(conversation.id, { limit: 3, order: 'asc' })) {
      ascending.push(item);
    }
    expect(ascending.map(textOf)).toEqual(['one', 'two', 'three', 'four', 'five']);
    expect(ascending[1]).toEqual({
      type: 'message',
      id: expect.stringMatching(/^msg_/),
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'two', annotations: [] }],
    });

    const three = ascending[2];
    expect(await alice.conversations.items.retrieve(three.id, { conversation_id: conversation.id })).toEqual(
      three,
    );
    const afterDelete = await alice.conversations.items.delete(three.id, {
      conversation_id: conversation.id,
    });
    expect(afterDelete).toEqual(await alice.conversations.retrieve(conversation.id));
    const remaining: string[] = [];
    for await (const item of alice.conversations.items.list(conversation.id, { order: 'asc' })) {
      remaining.push(textOf(item));
    }
    expect(remaining).toEqual(['one', 'two', 'four', 'five']);
    await expect(
      alice.conversations.items.retrieve(three.id, { conversation_id: conversation.id }),
    ).rejects.toMatchObject({
      status: 404,
      error: { code: 'item_not_found', message: `No item ${three.id} in this conversation` },
    });

    // The next turn's model sees the remaining items in order, and chat history shows them.
    upstream.script({ text: 'six' });
    await alice.responses.create({ model, conversation: conversation.id, input: 'seven' });
    expect(lastThread()).toEqual([
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'two' },
      { role: 'user', content: 'five' },
      { role: 'user', content: 'seven' },
    ]);
    expect(
      (upstream.last.body.messages as { role: string; content: string }[]).map((m) => m.content),
    ).toContain('four');
    const history = await api('GET', `${HISTORY}/${conversation.id.slice(5)}/messages`, {
      key: orgA.keys.user,
      userId: 'alice',
    });
    expect(history.body.map((message: any) => [message.role, message.content])).toEqual([
      ['user', 'one'],
      ['assistant', 'two'],
      ['user', 'five'],
      ['user', 'seven'],
      ['assistant', 'six'],
    ]);
  });

  it('threads a turn through `conversation` exactly as through previous_response_id', async () => {
    upstream.script({ text: 'first reply' }, { text: 'second reply' });
    const first = await alice.responses.create({ model, input: 'first question' });
    const second = await alice.responses.create({
      model,
      previous_response_id: first.id,
      input: 'second question',
    });
    const byPrevious = upstream.last.body.messages;

    const conversation = await alice.conversations.create();
    upstream.script({ text: 'first reply' }, { text: 'second reply' });
    const viaFirst = await alice.responses.create({
      model,
      conversation: conversation.id,
      input: 'first question',
    });
    const viaSecond = await alice.responses.create({
      model,
      conversation: { id: conversation.id },
      input: 'second question',
    });
    expect(upstream.last.body.messages).toEqual(byPrevious);
    expect(viaFirst.conversation).toEqual({ id: conversation.id.slice('conv_'.length) });
    expect(viaSecond.conversation).toEqual(viaFirst.conversation);
    expect(viaSecond.previous_response_id).toBe(viaFirst.id);
    expect(second.previous_response_id).toBe(first.id);

    // The conversation's items are the turns' input and output items, output ids as the Responses showed them.
    const items: any[] = [];
    for await (const item of alice.conversations.items.list(conversation.id, { order: 'asc' }))
      items.push(item);
    expect(items.map((item) => [item.type, item.role, item.content[0].text])).toEqual([
      ['message', 'user', 'first question'],
      ['message', 'assistant', 'first reply'],
      ['message', 'user', 'second question'],
      ['message', 'assistant', 'second reply'],
    ]);
    expect(items[1].id).toBe(viaFirst.output[0].id);
    expect(items[3].id).toBe(viaSecond.output[0].id);
    expect(
      await alice.conversations.items.retrieve(items[0].id, { conversation_id: conversation.id }),
    ).toEqual(items[0]);

    // Deleting a turn's items removes them from what the model sees next, and from chat history.
    await alice.conversations.items.delete(items[0].id, { conversation_id: conversation.id });
    await alice.conversations.items.delete(items[1].id, { conversation_id: conversation.id });
    upstream.script({ text: 'third reply' });
    await alice.responses.create({ model, conversation: conversation.id, input: 'third question' });
    expect(lastThread()).toEqual([
      { role: 'user', content: 'second question' },
      { role: 'assistant', content: 'second reply' },
      { role: 'user', content: 'third question' },
    ]);
    const history = await api('GET', `${HISTORY}/${viaFirst.conversation!.id}/messages`, {
      key: orgA.keys.user,
      userId: 'alice',
    });
    expect(history.body.map((message: any) => message.content)).toEqual([
      'second question',
      'second reply',
      'third question',
      'third reply',
    ]);
  });

  it('is the conversation chat history shows, both ways', async () => {
    // Created through the API: listed by chat history, titled by its first user item, no assistant yet.
    const made = await alice.conversations.create({ items: [{ role: 'user', content: 'Plan a picnic' }] });
    const bare = made.id.slice('conv_'.length);
    let listed = (await api('GET', HISTORY, { key: orgA.keys.user, userId: 'alice' })).body;
    expect(listed.find((c: any) => c.id === bare)).toMatchObject({
      title: 'Plan a picnic',
      assistantId: null,
    });
    upstream.script({ text: 'Bring bread.' });
    await alice.responses.create({ model, conversation: made.id, input: 'What to bring?' });
    listed = (await api('GET', HISTORY, { key: orgA.keys.user, userId: 'alice' })).body;
    expect(listed[0]).toMatchObject({ id: bare, title: 'Plan a picnic', assistantId: model });

    // Started by a turn: the Conversations API reads it by the Response's conversation.id.
    upstream.script({ text: 'Hello there.' });
    const turn = await alice.responses.create({ model, input: 'Hello' });
    const conversation = await alice.conversations.retrieve(turn.conversation!.id);
    expect(conversation).toEqual({
      id: `conv_${turn.conversation!.id}`,
      object: 'conversation',
      created_at: turn.created_at,
      metadata: {},
    });
    const page = await alice.conversations.items.list(conversation.id);
    expect(page.data.map((item: any) => item.content[0].text)).toEqual(['Hello there.', 'Hello']);
    // Deleting it through the API deletes it from chat history, with its responses.
    await alice.conversations.delete(conversation.id);
    expectError(
      await api('GET', `${HISTORY}/${turn.conversation!.id}/messages`, {
        key: orgA.keys.user,
        userId: 'alice',
      }),
      404,
      'conversation_not_found',
      'No conversation with that id',
    );
    expect(await app.dataSource.query('SELECT 1 FROM responses WHERE id = $1', [turn.id.slice(5)])).toEqual(
      [],
    );
  });

  describe('isolation by organization and user', () => {
    let owned: OpenAI.Conversations.Conversation;
    let itemId: string;
    let before: unknown;

    beforeAll(async () => {
      owned = await alice.conversations.create({
        items: [{ role: 'user', content: 'secret' }],
        metadata: { owner: 'alice' },
      });
      itemId = (await alice.conversations.items.list(owned.id)).data[0].id!;
      before = await snapshot();
    });

    const snapshot = () =>
      app.dataSource.query(
        `SELECT c.metadata, c.last_response_id, r.input, (SELECT count(*)::int FROM messages m WHERE m.conversation_id = c.id) AS messages
           FROM conversations c LEFT JOIN responses r ON r.conversation_id = c.id WHERE c.id = $1`,
        [owned.id.slice(5)],
      );

    const intruders: [string, () => OpenAI][] = [
      ['another user of the organization', () => bob],
      ['an anonymous caller of the organization', () => anonymous],
      ['the same x-user-id in another organization', () => otherOrg],
    ];

    it.each(intruders)('answers %s 404 on every endpoint, changing nothing', async (_label, intruder) => {
      const notFound = {
        status: 404,
        error: { code: 'conversation_not_found', message: `No conversation ${owned.id}` },
      };
      const them = intruder();
      await expect(them.conversations.retrieve(owned.id)).rejects.toMatchObject(notFound);
      await expect(
        them.conversations.update(owned.id, { metadata: { owner: 'them' } }),
      ).rejects.toMatchObject(notFound);
      await expect(them.conversations.items.list(owned.id)).rejects.toMatchObject(notFound);
      await expect(
        them.conversations.items.create(owned.id, { items: [{ role: 'user', content: 'injected' }] }),
      ).rejects.toMatchObject(notFound);
      await expect(
        them.conversations.items.retrieve(itemId, { conversation_id: owned.id }),
      ).rejects.toMatchObject(notFound);
      await expect(
        them.conversations.items.delete(itemId, { conversation_id: owned.id }),
      ).rejects.toMatchObject(notFound);
      await expect(them.conversations.delete(owned.id)).rejects.toMatchObject(notFound);
      const model = them === otherOrg ? `asst_${orgB.assistantId}` : `asst_${orgA.assistantId}`;
      const requests = upstream.requests.length;
      await expect(
        them.responses.create({ model, conversation: owned.id, input: 'hi' }),
      ).rejects.toMatchObject(notFound);
      expect(upstream.requests.length).toBe(requests);
      expect(await snapshot()).toEqual(before);
      // And the owner still reaches it.
      expect((await alice.conversations.retrieve(owned.id)).metadata).toEqual({ owner: 'alice' });
    });

    it('keeps an anonymous conversation to anonymous callers of its organization', async () => {
      const anon = await anonymous.conversations.create();
      expect((await anonymous.conversations.retrieve(anon.id)).id).toBe(anon.id);
      await expect(alice.conversations.retrieve(anon.id)).rejects.toMatchObject({ status: 404 });
      await expect(client(orgB.keys.full_access).conversations.retrieve(anon.id)).rejects.toMatchObject({
        status: 404,
      });
    });
  });

  describe('refusals', () => {
    let conversationId: string;
    beforeAll(async () => {
      conversationId = (await alice.conversations.create({ items: [{ role: 'user', content: 'x' }] })).id;
    });

    it('refuses previous_response_id together with conversation, naming both', async () => {
      const reply = await api('POST', '/v1/responses', {
        userId: 'alice',
        body: { model, input: 'hi', conversation: conversationId, previous_response_id: 'resp_x' },
      });
      expectError(
        reply,
        400,
        'invalid_request',
        'previous_response_id and conversation are mutually exclusive: send only one of them',
      );
    });

    it('refuses a malformed, unknown or other-assistant conversation on POST /v1/responses', async () => {
      expectError(
        await api('POST', '/v1/responses', {
          userId: 'alice',
          body: { model, input: 'hi', conversation: 42 },
        }),
        400,
        'invalid_request',
        'conversation must be a conversation id or an object {id}',
      );
      expectError(
        await api('POST', '/v1/responses', {
          userId: 'alice',
          body: { model, input: 'hi', conversation: 'conv_nope' },
        }),
        404,
        'conversation_not_found',
        'No conversation conv_nope',
      );
      const other = await app.running.app
        .get((await import('../src/assistants/assistants.service.js')).AssistantsService)
        .create(orgA.id, { name: 'other', model: { provider: 'offline' } });
      upstream.script({ text: 'ok' });
      await alice.responses.create({ model, conversation: conversationId, input: 'bind it' });
      expectError(
        await api('POST', '/v1/responses', {
          userId: 'alice',
          body: { model: `asst_${other.id}`, input: 'hi', conversation: conversationId },
        }),
        400,
        'invalid_request',
        `Conversation ${conversationId} belongs to assistant ${model}`,
      );
    });

    it('refuses bad bodies and queries by name', async () => {
      const path = `/v1/conversations/${conversationId}`;
      const cases: [string, string, unknown, number, string, string][] = [
        [
          'POST',
          '/v1/conversations',
          { items: 'x' },
          400,
          'invalid_request',
          'items must be an array of input items',
        ],
        [
          'POST',
          '/v1/conversations',
          { items: Array(21).fill({ role: 'user', content: 'x' }) },
          400,
          'invalid_request',
          'items: at most 20 items per request',
        ],
        [
          'POST',
          '/v1/conversations',
          { items: [{ type: 'image', url: 'x' }] },
          400,
          'invalid_input_type',
          'items[0] has an unsupported type "image"',
        ],
        [
          'POST',
          '/v1/conversations',
          { metadata: 'x' },
          400,
          'invalid_request',
          'metadata must be an object of string values',
        ],
        [
          'POST',
          '/v1/conversations',
          { metadata: { n: 1 } },
          400,
          'invalid_request',
          'metadata.n must be a string of at most 512 characters',
        ],
        [
          'POST',
          '/v1/conversations',
          { metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) },
          400,
          'invalid_request',
          'metadata has 17 keys; at most 16',
        ],
        [
          'POST',
          path,
          { metadata: { ['k'.repeat(65)]: 'v' } },
          400,
          'invalid_request',
          'metadata keys must be at most 64 characters (got 65)',
        ],
        ['POST', path, {}, 400, 'missing_required_field', 'Missing required field: metadata'],
        [
          'POST',
          `${path}/items`,
          {
            items: [
              { role: 'user', content: 'x' },
              { role: 'user', content: [{ type: 'input_file', file_url: 'https://example.com/a.pdf' }] },
            ],
          },
          400,
          'invalid_request',
          'items[1]: input_file with file_url or file_id is not supported here; send file_data, or send the file as input of a turn',
        ],
        [
          'POST',
          `${path}/items?include=reasoning.encrypted_content`,
          { items: [{ role: 'user', content: 'x' }] },
          400,
          'invalid_request',
          'include value "reasoning.encrypted_content" is not supported by this endpoint (supported: message.input_image.image_url)',
        ],
        ['POST', `${path}/items`, { items: [] }, 400, 'invalid_request', 'items must not be empty'],
        ['POST', `${path}/items`, {}, 400, 'missing_required_field', 'Missing required field: items'],
        [
          'GET',
          `${path}/items?limit=0`,
          undefined,
          400,
          'invalid_request',
          'limit must be a whole number from 1 to 100',
        ],
        [
          'GET',
          `${path}/items?limit=101`,
          undefined,
          400,
          'invalid_request',
          'limit must be a whole number from 1 to 100',
        ],
        ['GET', `${path}/items?order=up`, undefined, 400, 'invalid_request', 'order must be "asc" or "desc"'],
        [
          'GET',
          `${path}/items?after=msg_nope`,
          undefined,
          400,
          'invalid_request',
          'after is not a cursor this endpoint returned',
        ],
        [
          'GET',
          `${path}/items?include[]=message.output_text.logprobs`,
          undefined,
          400,
          'invalid_request',
          'include value "message.output_text.logprobs" is not supported by this endpoint (supported: message.input_image.image_url)',
        ],
        [
          'GET',
          `${path}/items/msg_nope`,
          undefined,
          404,
          'item_not_found',
          'No item msg_nope in this conversation',
        ],
        [
          'DELETE',
          `${path}/items/msg_nope`,
          undefined,
          404,
          'item_not_found',
          'No item msg_nope in this conversation',
        ],
        [
          'GET',
          '/v1/conversations/not-an-id',
          undefined,
          404,
          'conversation_not_found',
          'No conversation not-an-id',
        ],
      ];
      for (const [method, url, body, status, code, message] of cases) {
        const reply = await api(method, url, { userId: 'alice', body });
        expect({ method, url, status: reply.status, error: reply.body.error }).toEqual({
          method,
          url,
          status,
          error: { type: expect.any(String), code, message },
        });
      }
      // The SDK's include is refused the same way.
      await expect(
        alice.conversations.items.list(conversationId, { include: ['message.output_text.logprobs'] }),
      ).rejects.toMatchObject({
        status: 400,
        error: {
          message:
            'include value "message.output_text.logprobs" is not supported by this endpoint (supported: message.input_image.image_url)',
        },
      });
    });

    it('needs the user or full_access scope (the assistant scope is POST /v1/responses only)', async () => {
      expect(
        (await api('GET', `/v1/conversations/${conversationId}`, { key: orgA.keys.user, userId: 'alice' }))
          .status,
      ).toBe(200);
      const reply = await api('GET', `/v1/conversations/${conversationId}`, {
        key: orgA.keys.assistant,
        userId: 'alice',
      });
      expect(reply.status).toBe(403);
      expect(reply.body.error.code).toBe('insufficient_scope');
      const create = await api('POST', '/v1/conversations', { key: orgA.keys.assistant, body: {} });
      expect(create.status).toBe(403);
      // `conversation` on POST /v1/responses follows that route's own scopes.
      upstream.script({ text: 'ok' });
      const turn = await api('POST', '/v1/responses', {
        key: orgA.keys.assistant,
        userId: 'alice',
        body: { model, input: 'hi', conversation: conversationId },
      });
      expect(turn.status).toBe(200);
    });
  });
});
