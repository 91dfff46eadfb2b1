import pg from 'pg';
import { FaultProxy } from './support/fault-proxy.js';
import { call } from './support/http.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';

const serverUrl = process.env.DATABASE_URL;

async function rowsWithId(url: string, id: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM responses WHERE id = $1', [
      id.replace(/^resp_/, ''),
    ]);
    return Number(rows[0].n);
  } finally {
    await client.end();
  }
}

(serverUrl ? describe : describe.skip)(
  // The embedded database's socket is opened inside the service, so nothing can sit in between;
  // test/turn-store-writes.e2e-spec.ts replays the insert on both databases.
  'a JSON turn whose committed write lost its reply (needs DATABASE_URL; skipped on the embedded database)',
  () => {
    let database: TestDatabase;
    let proxy: FaultProxy;
    let app: TestApp;
    let org: SeededOrganization;

    beforeAll(async () => {
      database = await createTestDatabase();
      const direct = new URL(database.url as string);
      proxy = await new FaultProxy(Number(direct.port || 5432), direct.hostname).start();
      app = await startTestApp(
        { API_KEY_CACHE_TTL_SECONDS: '0' },
        { reuse: { ...database, env: { DATABASE_URL: proxy.rewrite(database.url as string) } } },
      );
      org = await app.seedOrganization('lost-reply');
    });
    afterAll(async () => {
      await app?.close();
      await proxy?.close();
    });

    it('answers 200 with the answer, stored once, when the connection drops after the commit', async () => {
      // The whole turn is one INSERT (turn_insert_new); its commit's answer never comes back.
      proxy.loseReplyTo('turn_insert');
      const reply = await call(app.baseUrl, 'POST', '/v1/responses', {
        key: org.keys.full_access,
        headers: { 'x-user-id': 'alice' },
        body: { model: org.assistantId, input: 'hello there' },
      });
      expect(proxy.lostReplies).toBe(1);
      expect(reply.status).toBe(200);
      expect(reply.body.status).toBe('completed');
      expect(reply.body.output_text.length).toBeGreaterThan(0);
      expect(await rowsWithId(database.url as string, reply.body.id)).toBe(1);
      const read = await call(app.baseUrl, 'GET', `/v1/responses/${reply.body.id}`, {
        key: org.keys.full_access,
        headers: { 'x-user-id': 'alice' },
      });
      expect(read.status).toBe(200);
      expect(read.body).toEqual(reply.body);
    });

    it('a turn continuing a conversation (turn_insert): the same', async () => {
      const first = await call(app.baseUrl, 'POST', '/v1/responses', {
        key: org.keys.full_access,
        headers: { 'x-user-id': 'bob' },
        body: { model: org.assistantId, input: 'first' },
      });
      expect(first.status).toBe(200);
      proxy.loseReplyTo('turn_insert');
      const reply = await call(app.baseUrl, 'POST', '/v1/responses', {
        key: org.keys.full_access,
        headers: { 'x-user-id': 'bob' },
        body: { model: org.assistantId, input: 'second', previous_response_id: first.body.id },
      });
      expect(proxy.lostReplies).toBe(2);
      expect(reply.status).toBe(200);
      expect(reply.body.previous_response_id).toBe(first.body.id);
      expect(await rowsWithId(database.url as string, reply.body.id)).toBe(1);
    });
  },
);
