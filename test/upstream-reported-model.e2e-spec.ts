import { AssistantsService } from '../src/assistants/assistants.service.js';
import { FakeUpstream } from './support/fake-upstream.js';
import { ANSWER } from './support/upstream-fault-scenarios.js';
import { call } from './support/http.js';
import { postStream } from './support/sse.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

/**
 * `model.failover.reportModel` (docs/resilience.md#fallback-targets, Failover Bench S16): with
 * `upstream` the Response's `model` names the upstream model that answered — in the JSON body,
 * the stream's Response objects and GET — while the stored row keeps the assistant; by default
 * it names the assistant (`asst_<uuid>`, decisions.md). Two assistants of one organization share
 * the same targets, one of them opting in.
 */
describe('the Response names the upstream model that answered, when the assistant opts in', () => {
  let primary: FakeUpstream;
  let fallback: FakeUpstream;
  let app: TestApp;
  let org: SeededOrganization;
  /** The assistant without the option. */
  let plainId: string;
  let user = 0;

  beforeAll(async () => {
    primary = await new FakeUpstream().start();
    fallback = await new FakeUpstream().start();
    primary.setFallback({ text: ANSWER });
    fallback.setFallback({ text: ANSWER });
    app = await startTestApp({
      PRIMARY_KEY: 'sk-primary',
      FALLBACK_KEY: 'sk-fallback',
      UPSTREAM_HEADERS_TIMEOUT_MS: '1500',
      UPSTREAM_BREAKER_FAILURES: '0',
    });
    const settings = {
      provider: 'openai-compatible',
      baseUrl: primary.url,
      model: 'primary-model',
      apiKeyEnv: 'PRIMARY_KEY',
      fallbacks: [{ baseUrl: fallback.url, model: 'small-model', apiKeyEnv: 'FALLBACK_KEY' }],
    };
    org = await app.seedOrganization('reported-model', {
      ...settings,
      failover: { reportModel: 'upstream' },
    });
    const plain = await app.running.app
      .get(AssistantsService)
      .create(org.id, { name: 'plain', instructions: 'You help.', model: settings });
    plainId = plain.id;
  });
  afterAll(async () => {
    await app?.close();
    await primary?.stop();
    await fallback?.stop();
  });

  /** One turn; the streamed one also returns the Response of its `response.created`. */
  async function turn(assistantId: string, stream: boolean, extra: Record<string, unknown> = {}) {
    const userId = `user-${++user}`;
    const body = { model: assistantId, input: 'count to ten', ...extra };
    const headers = { 'x-user-id': userId };
    if (!stream) {
      const reply = await call(app.baseUrl, 'POST', '/v1/responses', {
        key: org.keys.full_access,
        body,
        headers,
      });
      expect(reply.status).toBe(200);
      return { response: reply.body, created: undefined, userId };
    }
    const reply = await postStream(app.baseUrl, org.keys.full_access, body, headers);
    const objects = reply.events.filter((event) => event.json?.response).map((event) => event.json);
    expect(objects.map((event) => event.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.completed',
    ]);
    return { response: objects[2].response, created: objects[0].response, userId };
  }

  async function readBack(id: string, userId: string) {
    const read = await call(app.baseUrl, 'GET', `/v1/responses/${id}`, {
      key: org.keys.full_access,
      headers: { 'x-user-id': userId },
    });
    expect(read.status).toBe(200);
    const [row] = await app.dataSource.query('SELECT assistant_id FROM responses WHERE id = $1', [
      id.replace(/^resp_/, ''),
    ]);
    return { model: read.body.model, assistant: row.assistant_id };
  }

  it("after a failover: the fallback's model in the JSON body, the stream's final Response and GET; the row keeps the assistant", async () => {
    for (const stream of [false, true]) {
      primary.script({ status: 503 });
      const sent = fallback.requests.length;
      const { response, created, userId } = await turn(org.assistantId, stream);
      expect(fallback.requests.length).toBe(sent + 1);
      expect(response).toMatchObject({ status: 'completed', output_text: ANSWER, model: 'small-model' });
      // Before any target answered, the stream names the assistant's own model.
      if (stream) expect(created.model).toBe('primary-model');
      expect(await readBack(response.id, userId)).toEqual({
        model: 'small-model',
        assistant: org.assistantId,
      });
    }
  });

  it("healthy: the primary's model", async () => {
    for (const stream of [false, true]) {
      const { response, userId } = await turn(org.assistantId, stream);
      expect(response.model).toBe('primary-model');
      expect((await readBack(response.id, userId)).model).toBe('primary-model');
    }
  });

  it('without the option: the assistant, asst_<uuid>, after a failover too', async () => {
    for (const stream of [false, true]) {
      primary.script({ status: 503 });
      const { response, created, userId } = await turn(plainId, stream);
      expect(response).toMatchObject({ status: 'completed', model: `asst_${plainId}` });
      if (stream) expect(created.model).toBe(`asst_${plainId}`);
      expect(await readBack(response.id, userId)).toEqual({ model: `asst_${plainId}`, assistant: plainId });
    }
  });

  it('continues with previous_response_id: the thread is found by the assistant, whatever the body names', async () => {
    primary.script({ status: 503 });
    const userId = `user-${++user}`;
    const headers = { 'x-user-id': userId };
    const first = await call(app.baseUrl, 'POST', '/v1/responses', {
      key: org.keys.full_access,
      body: { model: org.assistantId, input: 'count to ten' },
      headers,
    });
    expect(first.body.model).toBe('small-model');
    for (const model of [org.assistantId, `asst_${org.assistantId}`]) {
      const next = await call(app.baseUrl, 'POST', '/v1/responses', {
        key: org.keys.full_access,
        body: { model, input: 'and back', previous_response_id: first.body.id },
        headers,
      });
      expect(next.status).toBe(200);
      expect(next.body).toMatchObject({ model: 'primary-model', previous_response_id: first.body.id });
      expect(primary.last.body.messages).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ role: 'user', content: 'count to ten' }),
          expect.objectContaining({ role: 'assistant', content: ANSWER }),
          expect.objectContaining({ role: 'user', content: 'and back' }),
        ]),
      );
    }
  });

  it('the admin API refuses an unknown value, naming the field', async () => {
    const put = (reportModel: string) =>
      call(app.baseUrl, 'PUT', `/admin/v1/organizations/${org.slug}/assistants/Reporting`, {
        headers: { authorization: `Bearer ${org.keys.admin}` },
        body: {
          instructions: 'x',
          model: {
            provider: 'openai-compatible',
            baseUrl: 'https://api.openai.com/v1',
            model: 'gpt',
            failover: { reportModel },
          },
        },
      });
    const refused = await put('fallback');
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toBe('model.failover.reportModel must be "assistant" or "upstream"');
    const accepted = await put('upstream');
    expect(accepted.status).toBeLessThan(300);
    expect(accepted.body.model.failover).toEqual({ reportModel: 'upstream' });
  });
});
