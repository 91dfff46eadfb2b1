import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { request } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { ApiKeysService } from '../src/api-keys/api-keys.service.js';
import { AssistantsService } from '../src/assistants/assistants.service.js';
import { createApp } from '../src/bootstrap/create-app.js';
import { loadConfig } from '../src/config/app-config.js';
import { OrganizationsService } from '../src/organizations/organizations.service.js';
import { parseSse } from './support/sse.js';
import { createTestDatabase, type TestDatabase } from './support/test-database.js';

/**
 * The built service as a process, stopped with a real SIGTERM. The build goes to a directory of
 * this run (under the ignored .switchboard/) so it cannot race another build of dist/. Type
 * errors elsewhere in the tree do not stop tsc from emitting; `npm run typecheck` reports them.
 */
const buildDir = resolve('.switchboard', `test-build-${randomBytes(4).toString('hex')}`);

async function build(): Promise<void> {
  await promisify(execFile)(
    process.execPath,
    [
      'node_modules/typescript/bin/tsc',
      '-p',
      'tsconfig.build.json',
      '--outDir',
      buildDir,
      '--tsBuildInfoFile',
      join(buildDir, '.tsbuildinfo'),
    ],
    { maxBuffer: 16 * 1024 * 1024 },
  ).catch(() => undefined);
  if (!existsSync(join(buildDir, 'src', 'main.js'))) throw new Error('the build produced no src/main.js');
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
}

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

interface ServiceProcess {
  baseUrl: string;
  child: ChildProcess;
  exit: Promise<number | null>;
  logs: Record<string, unknown>[];
  /** Resolves with the first log line (already written or still to come) that matches. */
  logged(msg: string): Promise<Record<string, unknown>>;
}

async function startService(database: TestDatabase, env: Record<string, string>): Promise<ServiceProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [join(buildDir, 'src', 'main.js')], {
    env: {
      PATH: process.env.PATH ?? '',
      ...database.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      QUICKSTART: 'false',
      LOG_LEVEL: 'log',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
  const waiters: { msg: string; done: (line: Record<string, unknown>) => void }[] = [];
  let buffered = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const text of lines) {
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(text) as Record<string, unknown>;
      } catch {
        line = { msg: text };
      }
      logs.push(line);
      for (const waiter of waiters.filter((candidate) => line.msg === candidate.msg)) waiter.done(line);
    }
  });
  child.stderr.resume();
  const exit = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  const service: ServiceProcess = {
    baseUrl: `http://127.0.0.1:${port}`,
    child,
    exit,
    logs,
    logged: (msg) =>
      new Promise((done) => {
        const seen = logs.find((line) => line.msg === msg);
        if (seen) done(seen);
        else waiters.push({ msg, done });
      }),
  };
  const started = await Promise.race([
    new Promise<boolean>((done) => {
      const poll = () =>
        logs.some((line) => String(line.msg).startsWith('Switchboard listening'))
          ? done(true)
          : setTimeout(poll, 50);
      poll();
    }),
    exit.then(() => false),
  ]);
  if (!started) throw new Error(`the service did not start: ${JSON.stringify(logs)}`);
  return service;
}

/** Posts a streamed request and resolves once the first text delta has arrived. */
async function openStream(baseUrl: string, key: string, model: string) {
  const res = await fetch(`${baseUrl}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ model, input: 'go', stream: true }),
  });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let raw = '';
  while (!raw.includes('response.output_text.delta')) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`stream ended before its first delta: ${raw}`);
    raw += decoder.decode(value, { stream: true });
  }
  return {
    async finish() {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        raw += decoder.decode(value, { stream: true });
      }
      return parseSse(raw).events.map((event) => event.json?.type ?? event.data) as string[];
    },
    raw: () => raw,
  };
}

function slowModel(words: number, delayMs: number): unknown {
  const reply = Array.from({ length: words }, (_, i) => `word${i}`).join(' ');
  return { provider: 'offline', tokenDelayMs: delayMs, script: [{ match: '.', reply }] };
}

describe('graceful shutdown of the built service on SIGTERM', () => {
  let database: TestDatabase;
  let key: string;
  let shortAssistant: string;
  let longAssistant: string;
  let service: ServiceProcess | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
    await build();
    // Seed through the services in this process, then hand the database over to the child.
    const running = await createApp(
      loadConfig({ PORT: '0', HOST: '127.0.0.1', QUICKSTART: 'false', ...database.env }),
      { logger: false },
    );
    try {
      const organization = await running.app.get(OrganizationsService).create({ slug: 'shutdown' });
      const assistants = running.app.get(AssistantsService);
      shortAssistant = (
        await assistants.create(organization.id, { name: 'short', model: slowModel(20, 100) })
      ).id;
      longAssistant = (await assistants.create(organization.id, { name: 'long', model: slowModel(200, 100) }))
        .id;
      key = (await running.app.get(ApiKeysService).create(organization.id, 'k', ['assistant'])).secret;
    } finally {
      await running.close();
    }
  }, 180_000);

  afterEach(() => {
    if (service && service.child.exitCode === null) service.child.kill('SIGKILL');
    service = undefined;
  });
  afterAll(async () => {
    await database?.drop();
    await rm(buildDir, { recursive: true, force: true });
  });

  it('turns readiness false, refuses new connections, lets the stream finish and exits 0', async () => {
    service = await startService(database, { SHUTDOWN_DELAY_SECONDS: '2', SHUTDOWN_GRACE_SECONDS: '30' });
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
    service = await startService(database, { SHUTDOWN_GRACE_SECONDS: '1' });
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
  });
});
