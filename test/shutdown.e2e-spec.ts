import { request } from 'node:http';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { ApiKeysService } from '../src/api-keys/api-keys.service.js';
import { AssistantsService } from '../src/assistants/assistants.service.js';
import { OrganizationsService } from '../src/organizations/organizations.service.js';
import {
  buildService,
  withInProcessApp,
  startService,
  type ServiceBuild,
  type ServiceProcess,
} from './support/built-service.js';
import { openStreamAtFirstDelta, parseSse } from './support/sse.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';

/** A request on a new connection (no keep-alive pool): the status, or the socket error's code. */
function freshRequest(url: string): Promise<number | string> {
  return new Promise((done) => {
    const req = request(url, { agent: false }, (res) => {
      res.resume();
      done(res.statusCode ?? 0);
    });
    req.on('error', (error: NodeJS.ErrnoException) => done(error.code ?? 'error'));
    req.end();
  });
}

/** Posts a streamed request and resolves once the first text delta has arrived. */
async function openStream(baseUrl: string, key: string, model: string) {
  const stream = await openStreamAtFirstDelta(baseUrl, key, model);
  return {
    async finish() {
      return parseSse(await stream.rest()).events.map((event) => event.json?.type ?? event.data) as string[];
    },
    raw: stream.raw,
  };
}

function slowModel(words: number, delayMs: number): unknown {
  const reply = Array.from({ length: words }, (_, i) => `word${i}`).join(' ');
  return { provider: 'offline', tokenDelayMs: delayMs, script: [{ match: '.', reply }] };
}

describe('graceful shutdown of the built service on SIGTERM', () => {
  let database: TestDatabase;
  let build: ServiceBuild;
  let key: string;
  let shortAssistant: string;
  let longAssistant: string;
  let service: ServiceProcess | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
    build = await buildService();
    // Seed through the services in this process, then hand the database over to the child.
    await withInProcessApp(database, async (app) => {
      const organization = await app.get(OrganizationsService).create({ slug: 'shutdown' });
      const assistants = app.get(AssistantsService);
      shortAssistant = (
        await assistants.create(organization.id, { name: 'short', model: slowModel(20, 100) })
      ).id;
      longAssistant = (await assistants.create(organization.id, { name: 'long', model: slowModel(200, 100) }))
        .id;
      key = (await app.get(ApiKeysService).create(organization.id, 'k', ['assistant'])).secret;
    });
  }, 180_000);

  afterEach(() => {
    if (service && service.child.exitCode === null) service.child.kill('SIGKILL');
    service = undefined;
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('turns readiness false, refuses new connections, lets the stream finish and exits 0', async () => {
    service = await startService(build, {
      ...database.env,
      SHUTDOWN_DELAY_SECONDS: '2',
      SHUTDOWN_GRACE_SECONDS: '30',
    });
    const stream = await openStream(service.baseUrl, key, shortAssistant);

    service.child.kill('SIGTERM');
    await service.logged('shutting down: readiness is now false');
    const ready = await fetch(`${service.baseUrl}/readyz`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { checks: { accepting: boolean } }).checks.accepting).toBe(false);

    await service.logged('listener closed: waiting for requests in flight');
    expect(await freshRequest(`${service.baseUrl}/healthz`)).toBe('ECONNREFUSED');

    const events = await stream.finish();
    expect(events).toContain('response.completed');
    expect(events).not.toContain('response.error');
    expect(events[events.length - 1]).toBe('[DONE]');

    expect(await service.exit).toBe(0);
    expect(service.logs.map((line) => line.msg)).toContain('shut down cleanly');
  });

  it('ends a stream that outlives the grace period with response.error, then exits 0', async () => {
    service = await startService(build, { ...database.env, SHUTDOWN_GRACE_SECONDS: '1' });
    const stream = await openStream(service.baseUrl, key, longAssistant);

    service.child.kill('SIGTERM');
    const events = await stream.finish();
    expect(events).not.toContain('response.completed');
    expect(events).toContain('response.error');
    const error = parseSse(stream.raw()).events.find((event) => event.event === 'response.error')?.json;
    expect(error.error).toEqual({
      type: 'server_error',
      code: 'service_overloaded',
      message: expect.any(String),
    });

    expect(await service.exit).toBe(0);
    // The cut stream was stored as failed before the replica closed its database.
    const responseId = parseSse(stream.raw()).events[0].json.response.id.slice('resp_'.length);
    const [row] = await withInProcessApp(database, (app) =>
      app
        .get<DataSource>(getDataSourceToken())
        .query('SELECT status, error FROM responses WHERE id = $1', [responseId]),
    );
    expect(row).toMatchObject({ status: 'failed', error: { code: 'service_overloaded' } });
  });
});
