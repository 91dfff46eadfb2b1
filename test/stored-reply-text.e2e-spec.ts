import type OpenAI from 'openai';
import { FakeUpstream } from './support/fake-upstream.js';
import { call } from './support/http.js';
import { postStream } from './support/sse.js';
import { sdkClient } from './support/sdk-client.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

const HISTORY = '/v1/chat/history/conversations';

/**
 * A stored turn reads back exactly as its client was sent it, whether or not its row keeps the
 * `output_text` copy of the reply (a later release stops storing it; this one reads it from
 * `output`): GET /v1/responses/{id} byte for byte, the Conversations API's items, and the
 * chat-history message an item deletion rewrites (docs/benchmarks.md, round "textonce").
 */
describe('the reply text a turn stores, read back', () => {
  let app: TestApp;
  let upstream: FakeUpstream;
  let org: SeededOrganization;
  let model: string;
  let alice: OpenAI;

  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    app = await startTestApp({ UPSTREAM_MAX_RETRIES: '0' });
    org = await app.seedOrganization('stored-text', {
      provider: 'openai-compatible',
      baseUrl: upstream.url,
      model: 'fake-model',
    });
    model = `asst_${org.assistantId}`;
    alice = sdkClient(app.baseUrl, org.keys.full_access, 'alice');
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.stop();
  });

  const getRaw = async (id: string) => {
    const res = await fetch(`${app.baseUrl}/v1/responses/${id}`, {
      headers: { 'x-api-key': org.keys.full_access, 'x-user-id': 'alice' },
    });
    expect(res.status).toBe(200);
    return res.text();
  };
  const uuidOf = (id: string) => id.slice('resp_'.length);
  /** The row as the next release writes it: no `output_text` copy (and, for `body`, a row stored before bodies were kept). */
  const withoutCopy = (id: string, column: 'output_text' | 'body') =>
    app.dataSource.query(
      `UPDATE responses SET ${column === 'body' ? "output_text = '', body = NULL" : "output_text = ''"} WHERE id = $1`,
      [uuidOf(id)],
    );

  it('GET answers the streamed response.completed object byte for byte, with or without the output_text copy', async () => {
    upstream.script({ reasoning: 'Thinking…', textChunks: ['Grüße, ', 'wörld 🌍', ' — "quoted"\n', 'end.'] });
    const stream = await postStream(
      app.baseUrl,
      org.keys.full_access,
      { model, input: 'Say hello.', reasoning: { effort: 'low' } },
      { 'x-user-id': 'alice' },
    );
    expect(stream.status).toBe(200);
    const completed = stream.events.find((event) => event.json?.type === 'response.completed')!.json.response;
    const sent = JSON.stringify(completed);
    expect(completed.output_text).toBe('Grüße, wörld 🌍 — "quoted"\nend.');
    expect(await getRaw(completed.id)).toBe(sent);
    await withoutCopy(completed.id, 'output_text');
    expect(await getRaw(completed.id)).toBe(sent);
  });

  it('GET answers the JSON reply byte for byte, and a body-less row keeps its output_text', async () => {
    upstream.script({ text: 'One.' });
    const res = await fetch(`${app.baseUrl}/v1/responses`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': org.keys.full_access,
        'x-user-id': 'alice',
      },
      body: JSON.stringify({ model, input: 'Say one word.' }),
    });
    expect(res.status).toBe(200);
    const sent = await res.text();
    const { id } = JSON.parse(sent) as { id: string };
    expect(await getRaw(id)).toBe(sent);
    await withoutCopy(id, 'output_text');
    expect(await getRaw(id)).toBe(sent);
    // A row stored before bodies were kept is rebuilt from its columns: its text from `output`.
    await withoutCopy(id, 'body');
    const rebuilt = JSON.parse(await getRaw(id));
    expect(rebuilt.output_text).toBe('One.');
    expect(rebuilt.output).toEqual(JSON.parse(sent).output);
  });

  it("the Conversations API's items and an item's deletion from chat history read the text from output", async () => {
    const conversation = await alice.conversations.create({});
    upstream.script({ text: 'first reply' });
    const first = await alice.responses.create({
      model,
      conversation: conversation.id,
      input: 'first question',
    });
    upstream.script({ text: 'second reply' });
    const second = await alice.responses.create({
      model,
      conversation: conversation.id,
      input: 'second question',
    });
    const list = async () => {
      const items: unknown[] = [];
      for await (const item of alice.conversations.items.list(conversation.id, { order: 'asc' }))
        items.push(item);
      return items;
    };
    const before = await list();
    await withoutCopy(first.id, 'output_text');
    await withoutCopy(second.id, 'output_text');
    expect(await list()).toEqual(before);

    // Deleting the first reply's item removes its chat-history message, found by the reply's text.
    await alice.conversations.items.delete(first.output[0].id!, { conversation_id: conversation.id });
    const history = await call(
      app.baseUrl,
      'GET',
      `${HISTORY}/${conversation.id.slice('conv_'.length)}/messages`,
      {
        key: org.keys.user,
        headers: { 'x-user-id': 'alice' },
      },
    );
    expect(history.status).toBe(200);
    expect(history.body.map((message: { content: string }) => message.content)).toEqual([
      'first question',
      'second question',
      'second reply',
    ]);
    upstream.script({ text: 'third reply' });
    await alice.responses.create({ model, conversation: conversation.id, input: 'third question' });
    expect((upstream.last.body.messages as { role: string }[]).filter((m) => m.role !== 'system')).toEqual([
      { role: 'user', content: 'first question' },
      { role: 'user', content: 'second question' },
      { role: 'assistant', content: 'second reply' },
      { role: 'user', content: 'third question' },
    ]);
  });
});
