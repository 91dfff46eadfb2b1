import { createHash, randomUUID } from 'node:crypto';
import { ApiKeysService } from '../src/api-keys/api-keys.service.js';
import { call } from './support/http.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

const tool = (name: string, type = 'function') => ({
  type,
  name,
  parameters: { type: 'object', properties: {} },
});

describe('POST /v1/responses: authentication, validation and error codes', () => {
  let app: TestApp;
  let org: SeededOrganization;
  let other: SeededOrganization;
  let model: string;

  beforeAll(async () => {
    app = await startTestApp({ API_KEY_CACHE_TTL_SECONDS: '0' });
    org = await app.seedOrganization('errors-org');
    other = await app.seedOrganization('other-org');
    model = org.assistantId;
  });
  afterAll(async () => {
    await app?.close();
  });

  const post = (
    body: unknown,
    headers: Record<string, string> = {},
    key: string | null = org.keys.assistant,
  ) => call(app.baseUrl, 'POST', '/v1/responses', { key: key ?? undefined, body, headers });

  const expectError = (reply: { status: number; body: any }, status: number, code: string, type: string) => {
    expect(reply.status).toBe(status);
    expect(reply.body).toEqual({ error: { type, code, message: expect.any(String) } });
  };

  describe('API keys (spec 5.1), on both header forms', () => {
    const forms: [string, (key: string) => Record<string, string>][] = [
      ['x-api-key', (key) => ({ 'x-api-key': key })],
      ['Authorization: Bearer', (key) => ({ authorization: `Bearer ${key}` })],
    ];

    it.each(forms)('accepts a valid key in %s', async (_form, header) => {
      expectError(
        await post({}, header(org.keys.assistant), null),
        400,
        'missing_required_field',
        'invalid_request_error',
      );
    });

    it('answers no key with 401 missing_api_key', async () => {
      expectError(
        await post({ model, input: 'x' }, {}, null),
        401,
        'missing_api_key',
        'authentication_error',
      );
    });

    it.each(forms)(
      'answers malformed, unknown and revoked keys with 401 invalid_api_key in %s',
      async (_form, header) => {
        const malformed = await post({ model, input: 'x' }, header('not-a-key'), null);
        expectError(malformed, 401, 'invalid_api_key', 'authentication_error');
        const unknown = await post({ model, input: 'x' }, header(`swb_${'A'.repeat(43)}`), null);
        expectError(unknown, 401, 'invalid_api_key', 'authentication_error');

        const keys = app.running.app.get(ApiKeysService);
        const { key, secret } = await keys.create(org.id, 'to revoke', ['assistant']);
        await keys.revoke(org.id, key.id);
        expectError(
          await post({ model, input: 'x' }, header(secret), null),
          401,
          'invalid_api_key',
          'authentication_error',
        );
      },
    );

    it.each(forms)('accepts a legacy 64-hex key imported by its hash in %s', async (_form, header) => {
      const legacy = randomUUID().replaceAll('-', '') + randomUUID().replaceAll('-', '');
      const hash = createHash('sha256').update(legacy).digest('hex');
      await app.running.app.get(ApiKeysService).importLegacy(org.id, 'legacy', hash, ['assistant']);
      expectError(
        await post({}, header(legacy), null),
        400,
        'missing_required_field',
        'invalid_request_error',
      );
    });

    it('answers a key without the scope with 403 insufficient_scope', async () => {
      expectError(
        await post({ model, input: 'x' }, {}, org.keys.user),
        403,
        'insufficient_scope',
        'authentication_error',
      );
    });

    it('lets a full_access key in', async () => {
      const reply = await post({ model, input: 'hello' }, {}, org.keys.full_access);
      expect(reply.status).toBe(200);
    });
  });

  describe('validation, in the order a user expects', () => {
    it('invalid_request: not a JSON object, bad field types, malformed x-user-tokens', async () => {
      expectError(await post('[1,2]'), 400, 'invalid_request', 'invalid_request_error');
      expectError(
        await post({ model, input: 'x', stream: 'yes' }),
        400,
        'invalid_request',
        'invalid_request_error',
      );
      const tokens = await post({ model, input: 'x' }, { 'x-user-tokens': '{not json' });
      expectError(tokens, 400, 'invalid_request', 'invalid_request_error');
      expect(tokens.body.error.message).toContain('x-user-tokens');
      expectError(
        await post({ model, input: 'x' }, { 'x-user-tokens': '{"github": 42}' }),
        400,
        'invalid_request',
        'invalid_request_error',
      );
    });

    it('missing_required_field for model, then input', async () => {
      const noModel = await post({ input: 'x' });
      expectError(noModel, 400, 'missing_required_field', 'invalid_request_error');
      expect(noModel.body.error.message).toContain('model');
      const noInput = await post({ model });
      expectError(noInput, 400, 'missing_required_field', 'invalid_request_error');
      expect(noInput.body.error.message).toContain('input');
    });

    it('invalid_model for anything but a UUID, bare or asst_-prefixed', async () => {
      expectError(await post({ model: 'gpt-4o', input: 'x' }), 400, 'invalid_model', 'invalid_request_error');
      expectError(
        await post({ model: 'asst_123', input: 'x' }),
        400,
        'invalid_model',
        'invalid_request_error',
      );
      expect((await post({ model: `asst_${model}`, input: 'x' })).status).toBe(200);
    });

    it('too_many_tools above 128', async () => {
      const tools = Array.from({ length: 129 }, (_, i) => tool(`t${i}`));
      expectError(await post({ model, input: 'x', tools }), 400, 'too_many_tools', 'invalid_request_error');
      const exactly = Array.from({ length: 128 }, (_, i) => tool(`t${i}`));
      expect((await post({ model, input: 'x', tools: exactly })).status).toBe(200);
    });

    it('invalid_tool_name for bad characters or more than 64 characters', async () => {
      expectError(
        await post({ model, input: 'x', tools: [tool('has space')] }),
        400,
        'invalid_tool_name',
        'invalid_request_error',
      );
      expectError(
        await post({ model, input: 'x', tools: [tool('a'.repeat(65))] }),
        400,
        'invalid_tool_name',
        'invalid_request_error',
      );
    });

    it('duplicate_tool_name when two tools share a name', async () => {
      expectError(
        await post({ model, input: 'x', tools: [tool('same'), tool('same')] }),
        400,
        'duplicate_tool_name',
        'invalid_request_error',
      );
    });

    it('tool_not_supported_for_model for hosted tool types and for a model without function calling', async () => {
      expectError(
        await post({ model, input: 'x', tools: [{ type: 'web_search_preview' }] }),
        400,
        'tool_not_supported_for_model',
        'invalid_request_error',
      );
      const noTools = await app.seedOrganization('no-tools-org', {
        provider: 'offline',
        functionCalling: false,
      });
      const reply = await post(
        { model: noTools.assistantId, input: 'x', tools: [tool('f')] },
        {},
        noTools.keys.assistant,
      );
      expectError(reply, 400, 'tool_not_supported_for_model', 'invalid_request_error');
    });

    it('invalid_input_type for an unknown item type, role or content part', async () => {
      expectError(
        await post({ model, input: [{ type: 'item_reference', id: 'x' }] }),
        400,
        'invalid_input_type',
        'invalid_request_error',
      );
      expectError(
        await post({ model, input: [{ role: 'robot', content: 'x' }] }),
        400,
        'invalid_input_type',
        'invalid_request_error',
      );
      expectError(
        await post({ model, input: [{ role: 'user', content: [{ type: 'input_audio', input_audio: {} }] }] }),
        400,
        'invalid_input_type',
        'invalid_request_error',
      );
    });

    it('missing_call_id for a function_call_output without call_id', async () => {
      expectError(
        await post({ model, input: [{ type: 'function_call_output', output: 'x' }] }),
        400,
        'missing_call_id',
        'invalid_request_error',
      );
    });

    it('reports the earlier problem first when a request has several', async () => {
      const reply = await post({
        model: 'bad',
        input: [{ type: 'nope' }],
        tools: [tool('same'), tool('same')],
      });
      expect(reply.body.error.code).toBe('invalid_model');
      const second = await post({ model, input: [{ type: 'nope' }], tools: [tool('same'), tool('same')] });
      expect(second.body.error.code).toBe('duplicate_tool_name');
    });

    it('accepts the input forms of decisions.md', async () => {
      const reply = await post({
        model,
        input: [
          { role: 'developer', content: 'Answer tersely.' },
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hello' }] },
          { role: 'assistant', content: [{ type: 'output_text', text: 'Hi!' }] },
          { role: 'user', content: 'How are you?' },
        ],
      });
      expect(reply.status).toBe(200);
      expect(reply.body.output_text).toBe('You said: How are you?');
    });
  });

  describe('404s for things the key cannot see', () => {
    it('assistant_not_found for an unknown UUID and for another organization’s assistant', async () => {
      expectError(
        await post({ model: randomUUID(), input: 'x' }),
        404,
        'assistant_not_found',
        'not_found_error',
      );
      expectError(
        await post({ model: other.assistantId, input: 'x' }),
        404,
        'assistant_not_found',
        'not_found_error',
      );
    });

    it('response_not_found for an unknown id and for another organization’s response', async () => {
      expectError(
        await post({ model, input: 'x', previous_response_id: 'resp_nope' }),
        404,
        'response_not_found',
        'not_found_error',
      );
      expectError(
        await post({ model, input: 'x', previous_response_id: `resp_${randomUUID()}` }),
        404,
        'response_not_found',
        'not_found_error',
      );
      const theirs = await post({ model: other.assistantId, input: 'theirs' }, {}, other.keys.assistant);
      expect(theirs.status).toBe(200);
      const reply = await post({ model, input: 'x', previous_response_id: theirs.body.id });
      expectError(reply, 404, 'response_not_found', 'not_found_error');
      const read = await call(app.baseUrl, 'GET', `/v1/responses/${theirs.body.id}`, {
        key: org.keys.user,
      });
      expectError(read, 404, 'response_not_found', 'not_found_error');
      const before = await app.dataSource.query(
        'SELECT count(*)::int AS n FROM responses WHERE organization_id = $1',
        [other.id],
      );
      expect(before[0].n).toBe(1);
    });
  });

  describe('the offline model', () => {
    it('follows its script: a reply, or a call of an offered tool', async () => {
      const scripted = await app.seedOrganization('scripted', {
        provider: 'offline',
        script: [
          { match: '^ping$', reply: 'pong' },
          { match: 'weather', call: { tool: 'get_weather', arguments: { city: 'Rome' } } },
          { match: '.', on: 'tool', reply: 'Tool said {{input}}' },
        ],
      });
      const send = (body: unknown) => post(body, {}, scripted.keys.assistant);
      expect((await send({ model: scripted.assistantId, input: 'ping' })).body.output_text).toBe('pong');
      const called = await send({
        model: scripted.assistantId,
        input: 'weather please',
        tools: [tool('get_weather')],
      });
      expect(called.body.status).toBe('requires_action');
      expect(called.body.output[0]).toMatchObject({
        type: 'function_call',
        name: 'get_weather',
        arguments: '{"city":"Rome"}',
      });
      const answered = await send({
        model: scripted.assistantId,
        previous_response_id: called.body.id,
        input: [{ type: 'function_call_output', call_id: called.body.output[0].call_id, output: 'sunny' }],
      });
      expect(answered.body.output_text).toBe('Tool said sunny');
    });
  });
});
