import { call } from './support/http.js';
import { expectValidCompaction, expectValidResponse } from './support/open-responses.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

/** The summary inside a compaction item, as docs/api.md documents its (opaque) encoding. */
const summaryOf = (item: any): string =>
  JSON.parse(Buffer.from(item.encrypted_content, 'base64url').toString('utf8')).summary;

/**
 * POST /v1/responses/compact (Open Responses `CompactResource`): the newest user message kept
 * verbatim plus one compaction item, which a later POST /v1/responses takes back as input; the
 * thread of previous_response_id read within the tenant only; refusals by name.
 */
describe('POST /v1/responses/compact', () => {
  let app: TestApp;
  let acme: SeededOrganization;
  let other: SeededOrganization;
  let model: string;

  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.seedOrganization('acme');
    other = await app.seedOrganization('other');
    model = `asst_${acme.assistantId}`;
  });
  afterAll(async () => {
    await app?.close();
  });

  const post = (path: string, body: unknown, options: { key?: string; user?: string } = {}) =>
    call(app.baseUrl, 'POST', path, {
      key: options.key ?? acme.keys.assistant,
      body,
      headers: options.user ? { 'x-user-id': options.user } : {},
    });

  const CONVERSATION = [
    { role: 'user', content: 'We agreed to launch on Tuesday.' },
    { role: 'assistant', content: 'Understood: Tuesday.' },
    { type: 'function_call', call_id: 'call_1', name: 'notify', arguments: '{"team":"support"}' },
    { type: 'function_call_output', call_id: 'call_1', output: 'support notified' },
    { role: 'user', content: 'What did we agree?' },
  ];

  it('keeps the newest user message and folds the rest into one compaction item', async () => {
    const reply = await post('/v1/responses/compact', {
      model,
      input: CONVERSATION,
      instructions: 'Answer in French.',
      prompt_cache_key: 'compact-test',
    });
    expect(reply.status).toBe(200);
    expectValidCompaction(reply.body);
    expect(reply.body).toMatchObject({ object: 'response.compaction', usage: { output_tokens: 0 } });
    expect(reply.body.id).toMatch(/^resp_/);
    const [kept, compaction, ...rest] = reply.body.output;
    expect(rest).toEqual([]);
    expect(kept).toMatchObject({
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text: 'What did we agree?' }],
    });
    expect(compaction.type).toBe('compaction');
    expect(summaryOf(compaction).split('\n')).toEqual([
      'instructions: Answer in French.',
      'user: We agreed to launch on Tuesday.',
      'assistant: Understood: Tuesday.',
      'assistant called notify({"team":"support"}) as call_1',
      'tool result (call_1): support notified',
    ]);
  });

  it('gives items a later POST /v1/responses takes back as input, the model seeing the summary', async () => {
    const compacted = await post('/v1/responses/compact', { model, input: CONVERSATION });
    const reply = await post('/v1/responses', { model, input: compacted.body.output });
    expect(reply.status).toBe(200);
    expectValidResponse(reply.body);
    expect(reply.body.output_text).toBe('You said: What did we agree?');
    const [row] = await app.dataSource.query(`SELECT transcript FROM responses WHERE id = $1`, [
      reply.body.id.slice('resp_'.length),
    ]);
    const transcript = typeof row.transcript === 'string' ? JSON.parse(row.transcript) : row.transcript;
    expect(JSON.stringify(transcript)).toContain('Summary of the earlier conversation:\\nuser: We agreed');
    const items = await call(app.baseUrl, 'GET', `/v1/responses/${reply.body.id}/input_items?order=asc`, {
      key: acme.keys.user,
    });
    expect(items.body.data[1]).toMatchObject({
      type: 'compaction',
      encrypted_content: compacted.body.output[1].encrypted_content,
    });
  });

  it('refuses a compaction item it did not write', async () => {
    const reply = await post('/v1/responses', {
      model,
      input: [{ type: 'compaction', encrypted_content: 'not-ours' }],
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error.message).toContain('input[0] (compaction) encrypted_content');
  });

  describe('previous_response_id', () => {
    let first: any;
    beforeAll(async () => {
      first = (await post('/v1/responses', { model, input: 'Remember the blue door.' }, { user: 'u-1' }))
        .body;
    });

    it('compacts the stored thread followed by the input', async () => {
      const reply = await post(
        '/v1/responses/compact',
        { model, previous_response_id: first.id, input: 'Which door?' },
        { user: 'u-1' },
      );
      expect(reply.status).toBe(200);
      expectValidCompaction(reply.body);
      expect(reply.body.output[0].content[0].text).toBe('Which door?');
      expect(summaryOf(reply.body.output[1])).toBe(
        'user: Remember the blue door.\nassistant: You said: Remember the blue door.',
      );
    });

    it('is not found for another end user, another organization or another assistant', async () => {
      const body = { model, previous_response_id: first.id };
      const otherUser = await post('/v1/responses/compact', body, { user: 'u-2' });
      const noUser = await post('/v1/responses/compact', body);
      const otherOrg = await post(
        '/v1/responses/compact',
        { model: `asst_${other.assistantId}`, previous_response_id: first.id },
        { key: other.keys.assistant, user: 'u-1' },
      );
      for (const reply of [otherUser, noUser, otherOrg]) {
        expect(reply.status).toBe(404);
        expect(reply.body.error.code).toBe('response_not_found');
      }
      // Acme's assistant id with the other organization's key: no such assistant there.
      const crossKey = await post('/v1/responses/compact', body, { key: other.keys.assistant, user: 'u-1' });
      expect(crossKey.status).toBe(404);
      expect(crossKey.body.error.code).toBe('assistant_not_found');
    });
  });

  describe('refusals', () => {
    it('requires model, naming it', async () => {
      const reply = await post('/v1/responses/compact', { input: 'Compact this conversation.' });
      expect(reply.status).toBe(400);
      expect(reply.body.error).toMatchObject({
        type: 'invalid_request_error',
        code: 'missing_required_field',
        message: 'Missing required field: model',
      });
    });

    it('requires input or previous_response_id', async () => {
      const reply = await post('/v1/responses/compact', { model });
      expect(reply.status).toBe(400);
      expect(reply.body.error.code).toBe('missing_required_field');
      expect(reply.body.error.message).toContain('input');
    });

    it('refuses a field it does not take, by name', async () => {
      const reply = await post('/v1/responses/compact', { model, input: 'x', temperature: 0.2 });
      expect(reply.status).toBe(400);
      expect(reply.body.error).toMatchObject({
        code: 'invalid_request',
        message: 'Unknown parameter: temperature',
      });
    });

    it('answers 404 for an unknown assistant and 400 for a malformed model', async () => {
      const unknown = await post('/v1/responses/compact', {
        model: 'asst_00000000-0000-4000-8000-000000000000',
        input: 'x',
      });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error.code).toBe('assistant_not_found');
      const malformed = await post('/v1/responses/compact', { model: 'gpt-4o', input: 'x' });
      expect(malformed.status).toBe(400);
      expect(malformed.body.error.code).toBe('invalid_model');
    });

    it('needs the assistant scope', async () => {
      const reply = await post('/v1/responses/compact', { model, input: 'x' }, { key: acme.keys.user });
      expect(reply.status).toBe(403);
      expect(reply.body.error.code).toBe('insufficient_scope');
    });
  });
});
