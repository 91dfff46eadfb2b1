import OpenAIv6 from 'openai';
import OpenAIv4 from 'openai-v4';
import OpenAIv7 from 'openai-v7';
import { call } from './support/http.js';
import { expectValidItem } from './support/open-responses.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

const SDKS: [string, any][] = [
  ['openai 4.x', OpenAIv4],
  ['openai 6.x', OpenAIv6],
  ['openai 7.x', OpenAIv7],
];

const LOOKUP_TOOL = {
  type: 'function',
  name: 'lookup',
  parameters: { type: 'object', properties: { q: { type: 'string' } } },
};

/**
 * GET /v1/responses/{id}/input_items and DELETE /v1/responses/{id} (issue 13, item 9): the
 * OpenAI list and deletion shapes, paging, refusals by name, what a deletion does to the thread
 * and to chat history, and the tenant boundary (organization, end user) from the other side.
 */
describe('response management: input_items and DELETE', () => {
  let app: TestApp;
  let acme: SeededOrganization;
  let other: SeededOrganization;
  let model: string;

  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.seedOrganization('acme', {
      provider: 'offline',
      script: [{ match: 'look it up', call: { tool: 'lookup', arguments: { q: 'x' } } }],
    });
    other = await app.seedOrganization('other');
    model = `asst_${acme.assistantId}`;
  });
  afterAll(async () => {
    await app?.close();
  });

  const api = (method: string, path: string, options: { key?: string; body?: unknown; user?: string } = {}) =>
    call(app.baseUrl, method, path, {
      // The `assistant` scope creates responses; reading and deleting them takes `user`.
      key:
        options.key ?? (method === 'POST' && path === '/v1/responses' ? acme.keys.assistant : acme.keys.user),
      body: options.body,
      headers: options.user ? { 'x-user-id': options.user } : {},
    });
  const create = async (body: Record<string, unknown>, user?: string) => {
    const reply = await api('POST', '/v1/responses', { body: { model, ...body }, user });
    expect(reply.status).toBe(200);
    return reply.body;
  };
  const rowCount = async (table: string, column: string, id: string) =>
    (await app.dataSource.query(`SELECT count(*)::int AS n FROM ${table} WHERE ${column} = $1`, [id]))[0]
      .n as number;

  const FIVE = [
    { role: 'developer', content: 'Answer tersely.' },
    { role: 'user', content: 'one' },
    { role: 'assistant', content: 'two' },
    { role: 'user', content: [{ type: 'input_text', text: 'three' }] },
    { type: 'message', role: 'user', content: 'four', id: 'msg_client_4' },
  ];

  describe('GET /v1/responses/{id}/input_items', () => {
    let response: any;
    beforeAll(async () => {
      response = await create({ input: FIVE });
    });

    it('lists the items as sent, newest first by default, in the OpenAI list shape', async () => {
      const reply = await api('GET', `/v1/responses/${response.id}/input_items`);
      expect(reply.status).toBe(200);
      const uuid = response.id.slice('resp_'.length).replaceAll('-', '');
      expect(reply.body).toEqual({
        object: 'list',
        data: [
          {
            id: 'msg_client_4',
            type: 'message',
            role: 'user',
            status: 'completed',
            content: [{ type: 'input_text', text: 'four' }],
          },
          {
            id: `msg_${uuid}_3`,
            type: 'message',
            role: 'user',
            status: 'completed',
            content: [{ type: 'input_text', text: 'three' }],
          },
          {
            id: `msg_${uuid}_2`,
            type: 'message',
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text: 'two', annotations: [] }],
          },
          {
            id: `msg_${uuid}_1`,
            type: 'message',
            role: 'user',
            status: 'completed',
            content: [{ type: 'input_text', text: 'one' }],
          },
          {
            id: `msg_${uuid}_0`,
            type: 'message',
            role: 'developer',
            status: 'completed',
            content: [{ type: 'input_text', text: 'Answer tersely.' }],
          },
        ],
        first_id: 'msg_client_4',
        last_id: `msg_${uuid}_0`,
        has_more: false,
      });
      for (const item of reply.body.data) expectValidItem(item);
    });

    it('pages with limit and after, in either order', async () => {
      const path = `/v1/responses/${response.id}/input_items`;
      const first = await api('GET', `${path}?order=asc&limit=2`);
      expect(first.body.data.map((item: any) => item.content[0].text)).toEqual(['Answer tersely.', 'one']);
      expect(first.body.has_more).toBe(true);
      const second = await api('GET', `${path}?order=asc&limit=2&after=${first.body.last_id}`);
      expect(second.body.data.map((item: any) => item.content[0].text)).toEqual(['two', 'three']);
      expect(second.body.has_more).toBe(true);
      const third = await api('GET', `${path}?order=asc&limit=2&after=${second.body.last_id}`);
      expect(third.body.data.map((item: any) => item.content[0].text)).toEqual(['four']);
      expect(third.body).toMatchObject({
        has_more: false,
        first_id: 'msg_client_4',
        last_id: 'msg_client_4',
      });
      const desc = await api('GET', `${path}?limit=3&after=msg_client_4`);
      expect(desc.body.data.map((item: any) => item.content[0].text)).toEqual(['three', 'two', 'one']);
    });

    it.each([
      [
        'include=file_search_call.results',
        'include value "file_search_call.results" is not supported by this endpoint (supported: message.input_image.image_url)',
      ],
      [
        'include[]=reasoning.encrypted_content',
        'include value "reasoning.encrypted_content" is not supported by this endpoint (supported: message.input_image.image_url)',
      ],
      ['order=newest', 'order must be "asc" or "desc"'],
      ['limit=0', 'limit must be a whole number from 1 to 100'],
      ['limit=101', 'limit must be a whole number from 1 to 100'],
      ['after=msg_unknown', 'after is not a cursor this endpoint returned'],
      ['before=msg_client_4', 'before is not supported by this endpoint: page with after'],
    ])('refuses %s by name', async (query, message) => {
      const reply = await api('GET', `/v1/responses/${response.id}/input_items?${query}`);
      expect(reply.status).toBe(400);
      expect(reply.body.error).toEqual({ type: 'invalid_request_error', code: 'invalid_request', message });
    });

    it('accepts the include it honours', async () => {
      const reply = await api(
        'GET',
        `/v1/responses/${response.id}/input_items?include=message.input_image.image_url`,
      );
      expect(reply.status).toBe(200);
      expect(reply.body.data).toHaveLength(5);
    });

    it('shows function calls and their outputs', async () => {
      const asked = await create({ input: 'please look it up', tools: [LOOKUP_TOOL] });
      expect(asked.status).toBe('requires_action');
      const call = asked.output.find((item: any) => item.type === 'function_call');
      const answered = await create({
        previous_response_id: asked.id,
        input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"found":true}' }],
        tools: [LOOKUP_TOOL],
      });
      const reply = await api('GET', `/v1/responses/${answered.id}/input_items`);
      expect(reply.body.data).toEqual([
        {
          id: expect.stringMatching(/^fco_[0-9a-f]{32}_0$/),
          type: 'function_call_output',
          call_id: call.call_id,
          output: '{"found":true}',
          status: 'completed',
        },
      ]);
      expectValidItem(reply.body.data[0]);
    });
  });

  describe('tenant boundary, from the other side', () => {
    let owned: any;
    beforeAll(async () => {
      owned = await create({ input: 'private to u-1' }, 'u-1');
    });

    it.each([
      ['another organization', { key: 'other' }],
      ['another end user', { user: 'u-2' }],
      ['no end user', {}],
    ])('%s sees 404 and cannot delete', async (_who, who: { key?: string; user?: string }) => {
      const options = { key: who.key ? other.keys.user : undefined, user: who.user };
      const items = await api('GET', `/v1/responses/${owned.id}/input_items`, options);
      expect(items.status).toBe(404);
      expect(items.body.error.code).toBe('response_not_found');
      const deleted = await api('DELETE', `/v1/responses/${owned.id}`, options);
      expect(deleted.status).toBe(404);
      expect(await rowCount('responses', 'id', owned.id.slice(5))).toBe(1);
    });

    it('the owner sees the items', async () => {
      const items = await api('GET', `/v1/responses/${owned.id}/input_items`, { user: 'u-1' });
      expect(items.status).toBe(200);
      expect(items.body.data[0].content).toEqual([{ type: 'input_text', text: 'private to u-1' }]);
    });
  });

  describe('DELETE /v1/responses/{id}', () => {
    it('deletes the response and its chat-history messages, and answers with the deletion object', async () => {
      const first = await create({ input: 'first turn' }, 'u-d');
      const second = await create({ input: 'second turn', previous_response_id: first.id }, 'u-d');
      const conversationId = first.conversation.id;

      const reply = await api('DELETE', `/v1/responses/${second.id}`, { user: 'u-d' });
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({ id: second.id, object: 'response', deleted: true });
      expect(await rowCount('messages', 'response_id', second.id.slice(5))).toBe(0);
      expect((await api('GET', `/v1/responses/${second.id}`)).status).toBe(404);
      expect((await api('GET', `/v1/responses/${second.id}/input_items`, { user: 'u-d' })).status).toBe(404);
      expect((await api('DELETE', `/v1/responses/${second.id}`, { user: 'u-d' })).status).toBe(404);
      const continued = await api('POST', '/v1/responses', {
        body: { model, input: 'again', previous_response_id: second.id },
        user: 'u-d',
      });
      expect(continued.status).toBe(404);

      // The conversation now ends at the turn before: chat history lists the first turn only.
      const history = await call(
        app.baseUrl,
        'GET',
        `/v1/chat/history/conversations/${conversationId}/messages`,
        {
          key: acme.keys.user,
          headers: { 'x-user-id': 'u-d' },
        },
      );
      expect(history.status).toBe(200);
      expect(history.body.map((message: any) => message.content)).toEqual([
        'first turn',
        'You said: first turn',
      ]);
      // Deleting the last response of a conversation deletes the conversation.
      expect((await api('DELETE', `/v1/responses/${first.id}`, { user: 'u-d' })).status).toBe(200);
      expect(await rowCount('conversations', 'id', conversationId)).toBe(0);
    });

    it('turns that continued from a deleted response can no longer be continued, and say why', async () => {
      const first = await create({ input: 'root' });
      const second = await create({ input: 'middle', previous_response_id: first.id });
      const third = await create({ input: 'leaf', previous_response_id: second.id });
      expect((await api('DELETE', `/v1/responses/${second.id}`)).status).toBe(200);

      const reply = await api('POST', '/v1/responses', {
        body: { model, input: 'more', previous_response_id: third.id },
      });
      expect(reply.status).toBe(400);
      expect(reply.body.error).toEqual({
        type: 'invalid_request_error',
        code: 'invalid_request',
        message: `previous_response_id ${third.id} continues a thread from which an earlier response was deleted; it can no longer be continued`,
      });
      // The turns that remain are still readable, and the first one can still be continued.
      expect((await api('GET', `/v1/responses/${third.id}`)).status).toBe(200);
      const branch = await api('POST', '/v1/responses', {
        body: { model, input: 'new branch', previous_response_id: first.id },
      });
      expect(branch.status).toBe(200);
    });
  });

  describe.each(SDKS)('with the official SDK (%s)', (_label, OpenAI) => {
    let client: any;
    beforeAll(() => {
      client = new OpenAI({ apiKey: acme.keys.full_access, baseURL: `${app.baseUrl}/v1`, maxRetries: 0 });
    });

    it('responses.inputItems.list pages through every item', async () => {
      const response = await client.responses.create({ model, input: FIVE });
      const page = await client.responses.inputItems.list(response.id, { limit: 2, order: 'asc' });
      expect(page.data).toHaveLength(2);
      expect(page.has_more).toBe(true);
      const texts: string[] = [];
      for await (const item of client.responses.inputItems.list(response.id, { limit: 2 })) {
        texts.push(item.content[0].text);
      }
      expect(texts).toEqual(['four', 'three', 'two', 'one', 'Answer tersely.']);
    });

    it('responses.delete removes the response', async () => {
      const response = await client.responses.create({ model, input: 'to be deleted' });
      // openai 4.x names it `del`.
      await (client.responses.delete ?? client.responses.del).call(client.responses, response.id);
      await expect(client.responses.retrieve(response.id)).rejects.toMatchObject({ status: 404 });
    });
  });
});
