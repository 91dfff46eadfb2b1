import { call, type ApiReply } from '../support/http.js';
import { startTestApp, type SeededOrganization, type TestApp } from '../support/test-app.js';

/**
 * Attack suite, issue 24 item 5: a response, its events and input items, and a conversation
 * belong to the organization AND the end user (`x-user-id`, or nobody) that made them. Every
 * route that reads, resumes, cancels, continues or deletes one is tried by another user of the
 * same organization, by an anonymous caller of it, and by the same user id in another
 * organization: each gets the 404 of something that does not exist, and nothing changes. The
 * `assistant` scope creates responses only: every other response route is 403 to it.
 */
describe('security: per-user responses and conversations', () => {
  let app: TestApp;
  let a: SeededOrganization;
  let b: SeededOrganization;

  /** Alice's objects in organization A. */
  let response: any;
  let background: any;
  let conversationId: string;
  let itemId: string;
  let anonymous: any;

  const as = (
    org: SeededOrganization,
    user: string | null,
    key = org.keys.full_access,
  ): { key: string; headers: Record<string, string> } => ({
    key,
    headers: user === null ? {} : { 'x-user-id': user },
  });
  const request = (method: string, path: string, who: ReturnType<typeof as>, body?: unknown) =>
    call(app.baseUrl, method, path, { ...who, body });

  beforeAll(async () => {
    app = await startTestApp();
    a = await app.seedOrganization('iso-a');
    b = await app.seedOrganization('iso-b');
    const alice = as(a, 'alice');
    const created = await request('POST', '/v1/responses', alice, {
      model: a.assistantId,
      input: 'my private question',
    });
    expect(created.status).toBe(200);
    response = created.body;
    // Background and streamed: the call returns once the turn has ended.
    const streamed = await request('POST', '/v1/responses', alice, {
      model: a.assistantId,
      input: 'my private background question',
      background: true,
      stream: true,
    });
    expect(streamed.status).toBe(200);
    // The row's final status is written just after the final event: read until it shows.
    for (let attempt = 0; attempt < 500 && background?.status !== 'completed'; attempt++) {
      background = (await request('GET', `/v1/responses/${idOf(streamed.body)}`, alice)).body;
      if (background.status !== 'completed') await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(background.status).toBe('completed');
    const conversation = await request('POST', '/v1/conversations', alice, {
      items: [{ type: 'message', role: 'user', content: 'my private note' }],
      metadata: { topic: 'private' },
    });
    expect(conversation.status).toBe(200);
    conversationId = conversation.body.id;
    const items = await request('GET', `/v1/conversations/${conversationId}/items`, alice);
    itemId = items.body.data[0].id;
    const anon = await request('POST', '/v1/responses', as(a, null), { model: a.assistantId, input: 'anon' });
    expect(anon.status).toBe(200);
    anonymous = anon.body;
  }, 120_000);

  afterAll(async () => {
    await app?.close();
  });

  /** What another caller tries, with the status and code it must get. */
  function attempts(caller: SeededOrganization, anonymousCaller: boolean): [string, string, unknown?][] {
    const model = caller.assistantId;
    // Chat history needs an x-user-id (400 without one): it is tried by callers who send one.
    const history: [string, string][] = anonymousCaller
      ? []
      : [['GET', `/v1/chat/history/conversations/${response.conversation.id}/messages`]];
    return [
      ...history,
      ['GET', `/v1/responses/${response.id}`],
      ['GET', `/v1/responses/${background.id}`],
      ['GET', `/v1/responses/${background.id}?stream=true`],
      ['GET', `/v1/responses/${background.id}?stream=true&starting_after=0`],
      ['GET', `/v1/responses/${response.id}/input_items`],
      ['POST', `/v1/responses/${background.id}/cancel`],
      ['DELETE', `/v1/responses/${response.id}`],
      ['DELETE', `/v1/responses/${background.id}`],
      ['POST', '/v1/responses', { model, input: 'continue', previous_response_id: response.id }],
      ['POST', '/v1/responses', { model, input: 'continue', previous_response_id: background.id }],
      ['POST', '/v1/responses', { model, input: 'continue', conversation: conversationId }],
      ['POST', '/v1/responses/compact', { model, input: 'x', previous_response_id: response.id }],
      ['GET', `/v1/conversations/${conversationId}`],
      ['POST', `/v1/conversations/${conversationId}`, { metadata: { topic: 'stolen' } }],
      ['DELETE', `/v1/conversations/${conversationId}`],
      ['GET', `/v1/conversations/${conversationId}/items`],
      [
        'POST',
        `/v1/conversations/${conversationId}/items`,
        { items: [{ type: 'message', role: 'user', content: 'injected' }] },
      ],
      ['GET', `/v1/conversations/${conversationId}/items/${itemId}`],
      ['DELETE', `/v1/conversations/${conversationId}/items/${itemId}`],
    ];
  }

  async function snapshot(): Promise<unknown> {
    const alice = as(a, 'alice');
    const reads = await Promise.all([
      request('GET', `/v1/responses/${response.id}`, alice),
      request('GET', `/v1/responses/${background.id}`, alice),
      request('GET', `/v1/responses/${response.id}/input_items`, alice),
      request('GET', `/v1/conversations/${conversationId}`, alice),
      request('GET', `/v1/conversations/${conversationId}/items`, alice),
      request('GET', `/v1/chat/history/conversations/${response.conversation.id}/messages`, alice),
    ]);
    const rows = await app.dataSource.query(
      `SELECT (SELECT count(*)::int FROM responses WHERE organization_id = $1) AS responses,
              (SELECT count(*)::int FROM conversations WHERE organization_id = $1) AS conversations,
              (SELECT count(*)::int FROM messages WHERE organization_id = $1) AS messages`,
      [a.id],
    );
    return { reads: reads.map((reply) => [reply.status, reply.body]), rows };
  }

  it.each([
    ['another user of the organization', () => as(a, 'bob'), () => a],
    ['an anonymous caller of the organization', () => as(a, null), () => a],
    ['the same user id in another organization', () => as(b, 'alice'), () => b],
  ])('%s gets 404 on every response and conversation route, and changes nothing', async (_who, who, org) => {
    const before = await snapshot();
    const caller = who();
    const anonymousCaller = !('x-user-id' in caller.headers);
    for (const [method, path, body] of attempts(org(), anonymousCaller)) {
      const reply = await request(method, path, caller, body);
      expect({ method, path, status: reply.status, type: reply.body?.error?.type }).toEqual({
        method,
        path,
        status: 404,
        type: 'not_found_error',
      });
    }
    expect(await snapshot()).toEqual(before);
    if (!anonymousCaller) {
      // Alice's conversation is in no one else's history.
      const listed = await request('GET', '/v1/chat/history/conversations', caller);
      expect(listed.status).toBe(200);
      expect(JSON.stringify(listed.body)).not.toContain(response.conversation.id.replace(/^conv_/, ''));
    }
  });

  it('shows an anonymous response to anonymous callers of its organization only', async () => {
    expect((await request('GET', `/v1/responses/${anonymous.id}`, as(a, null))).body).toEqual(anonymous);
    for (const who of [as(a, 'alice'), as(b, null)]) {
      const reply = await request('GET', `/v1/responses/${anonymous.id}`, who);
      expect(reply.status).toBe(404);
      expect(reply.body.error.code).toBe('response_not_found');
    }
  });

  it('the owner still reads everything (the attempts above could have failed)', async () => {
    const alice = as(a, 'alice');
    expect((await request('GET', `/v1/responses/${response.id}`, alice)).body).toEqual(response);
    expect((await request('GET', `/v1/responses/${response.id}`, as(a, 'alice', a.keys.user))).status).toBe(
      200,
    );
    const items = await request('GET', `/v1/conversations/${conversationId}/items/${itemId}`, alice);
    expect(items.status).toBe(200);
  });

  it('refuses the assistant scope on every response route but creating one (403)', async () => {
    const assistantKey = as(a, 'alice', a.keys.assistant);
    const routes: [string, string][] = [
      ['GET', `/v1/responses/${response.id}`],
      ['GET', `/v1/responses/${background.id}?stream=true`],
      ['GET', `/v1/responses/${response.id}/input_items`],
      ['POST', `/v1/responses/${background.id}/cancel`],
      ['DELETE', `/v1/responses/${response.id}`],
    ];
    for (const [method, path] of routes) {
      const reply: ApiReply = await request(method, path, assistantKey);
      expect({ path, method, status: reply.status, code: reply.body.error?.code }).toEqual({
        path,
        method,
        status: 403,
        code: 'insufficient_scope',
      });
    }
    const creating = await request('POST', '/v1/responses', assistantKey, {
      model: a.assistantId,
      input: 'hi',
    });
    expect(creating.status).toBe(200);
    expect((await request('GET', `/v1/responses/${response.id}`, as(a, 'alice'))).status).toBe(200);
  });
});

/** The response id in a background stream: `response.created` carries it. */
function idOf(stream: string): string {
  const match = /"id":"(resp_[0-9a-f-]+)"/.exec(stream);
  if (!match) throw new Error('no response id in the stream');
  return match[1];
}
