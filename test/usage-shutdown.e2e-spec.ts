import { setTimeout as sleep } from 'node:timers/promises';
import { CapturedLog } from './support/captured-log.js';
import { FakeUpstream } from './support/fake-upstream.js';
import { call } from './support/http.js';
import { startTestApp, type TestApp } from './support/test-app.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';

/**
 * A background turn still running when the service closes without the shutdown sequence (or past
 * its final window) is stopped as a cancelled one is: the tokens the upstream reported are stored
 * before the usage flush and the pool's end, which they used to race, and nothing logs a failure.
 */
describe('usage of a background turn stopped by the service closing', () => {
  let upstream: FakeUpstream;
  let database: TestDatabase;
  let app: TestApp | undefined;

  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    database = await createTestDatabase();
  });

  afterAll(async () => {
    await app?.stop();
    await database?.drop();
    await upstream?.stop();
  });

  it('stores its usage before the pool closes, logging no failure; a restart counts it once', async () => {
    const log = new CapturedLog();
    app = await startTestApp({ UPSTREAM_TEST_KEY: 'sk-test' }, { reuse: database, logger: log });
    const org = await app.seedOrganization('closing', {
      provider: 'openai-compatible',
      baseUrl: upstream.url,
      model: 'held-model',
      apiKeyEnv: 'UPSTREAM_TEST_KEY',
    });
    // Three words and their usage chunk, then the stream stays open: the turn runs until stopped.
    upstream.script({ text: 'one two three', omitFinish: true, holdOpen: true });
    const created = await call(app.baseUrl, 'POST', '/v1/responses', {
      key: org.keys.full_access,
      body: { model: `asst_${org.assistantId}`, input: 'count me', background: true },
    });
    expect(created.status).toBe(200);
    for (let attempt = 0; upstream.requests.length === 0; attempt++) {
      if (attempt > 500) throw new Error('the model call never came');
      await sleep(20);
    }
    // The fake writes every chunk at once; leave the service time to read them.
    await sleep(300);
    await app.stop();
    app = undefined;
    expect(log.problems).toEqual([]);

    // The next boot adds what is still pending at once (USAGE_ORPHAN_AFTER_MS=0): one turn.
    app = await startTestApp(
      { UPSTREAM_TEST_KEY: 'sk-test', USAGE_ORPHAN_AFTER_MS: '0' },
      { reuse: database },
    );
    const report = await call(app.baseUrl, 'GET', '/admin/v1/usage', { key: org.keys.admin });
    expect(report.body.total).toMatchObject({ turns: 1, input_tokens: 11, output_tokens: 3 });
  });
});
