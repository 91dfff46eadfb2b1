import { call } from './support/http.js';
import { startTestApp, type TestApp } from './support/test-app.js';

describe('threads survive a restart', () => {
  let app: TestApp | undefined;

  afterAll(async () => {
    await app?.close();
  });

  it('continues a conversation started before the service restarted, key and assistant intact', async () => {
    const first = await startTestApp();
    app = first;
    const org = await first.seedOrganization('restart', {
      provider: 'offline',
      script: [{ match: 'remember', reply: 'Noted.' }],
    });
    const before = await call(first.baseUrl, 'POST', '/v1/responses', {
      key: org.keys.assistant,
      headers: { 'x-user-id': 'u-restart' },
      body: { model: org.assistantId, input: 'remember the number 42' },
    });
    expect(before.status).toBe(200);
    await first.stop();

    const second = await startTestApp({}, { reuse: first.database });
    app = second;
    const after = await call(second.baseUrl, 'POST', '/v1/responses', {
      key: org.keys.assistant,
      headers: { 'x-user-id': 'u-restart' },
      body: { model: org.assistantId, input: 'what was it?', previous_response_id: before.body.id },
    });
    expect(after.status).toBe(200);
    expect(after.body.previous_response_id).toBe(before.body.id);
    expect(after.body.conversation.id).toBe(before.body.conversation.id);
    const [row] = await second.dataSource.query('SELECT depth FROM responses WHERE id = $1', [
      after.body.id.slice(5),
    ]);
    expect(row.depth).toBe(2);
  });
});
