import { call } from './support/http.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

describe('an unexpected internal failure', () => {
  let app: TestApp;
  let org: SeededOrganization;

  beforeAll(async () => {
    app = await startTestApp();
    org = await app.seedOrganization('broken');
  });
  afterAll(async () => {
    await app?.close();
  });

  it('answers 500 server_error in the envelope with a request id, and leaks no SQL or stack', async () => {
    // Break the database under a running service: the next query fails inside the driver.
    await app.dataSource.query('DROP TABLE memory_items CASCADE');
    const reply = await call(app.baseUrl, 'GET', '/v1/memory', {
      key: org.keys.user,
      headers: { 'x-user-id': 'u1' },
    });
    expect(reply.status).toBe(500);
    expect(reply.body).toEqual({
      error: {
        type: 'server_error',
        code: 'server_error',
        message: 'The server failed to handle the request',
      },
    });
    expect(reply.headers.get('x-request-id')).toMatch(/^req_/);
    const raw = JSON.stringify(reply.body);
    for (const leak of ['memory_items', 'relation', 'SELECT', 'at ', '.ts:']) expect(raw).not.toContain(leak);
  });
});
