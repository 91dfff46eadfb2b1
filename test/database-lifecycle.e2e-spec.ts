import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { access, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { MIGRATIONS } from '../migrations/index.js';
import { runAdmin } from '../src/admin/admin.runner.js';
import { createApp, type RunningApp } from '../src/bootstrap/create-app.js';
import { JsonLogger } from '../src/common/logging/json-logger.js';
import { loadConfig } from '../src/config/app-config.js';
import { openDatabase } from '../src/database/embedded-postgres.js';
import { call } from './support/http.js';
import { createTestDatabase } from './support/test-database.js';

/** Each of these starts the service (and its migrations) several times: minutes on a loaded machine. */
const SLOW_TEST_MS = 180_000;

const onPostgres = Boolean(process.env.DATABASE_URL);

async function start(
  env: Record<string, string>,
  logger: JsonLogger | false = false,
): Promise<{ running: RunningApp; baseUrl: string }> {
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'error', ...env });
  const running = await createApp(config, { logger });
  await running.app.listen(0, '127.0.0.1');
  const { port } = running.app.getHttpServer().address() as { port: number };
  return { running, baseUrl: `http://127.0.0.1:${port}` };
}

/** The admin CLI, in-process, with `--json`; fails the test on a non-zero exit. */
async function admin(env: Record<string, string>, ...argv: string[]): Promise<any> {
  let stdout = '';
  let stderr = '';
  const code = await runAdmin(
    [...argv, '--json'],
    { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } },
    env,
  );
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(stdout);
}

/** A key that authenticates reaches validation (400); an unknown one is refused (401). */
async function keyWorks(baseUrl: string, key: string): Promise<boolean> {
  const reply = await call(baseUrl, 'POST', '/v1/responses', { key, body: {} });
  if (reply.status === 401) return false;
  expect(reply.body.error.code).toBe('missing_required_field');
  return true;
}

(onPostgres ? describe.skip : describe)('restarting on the embedded database', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchboard-restart-'));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(
    'keeps organizations, keys and assistants',
    async () => {
      const env = { EMBEDDED_DATA_DIR: join(dir, 'data') };

      // First start on an empty data directory: the quickstart seeds a demo key and assistant.
      const first = await start({ ...env, QUICKSTART: 'true' });
      const quickstart = first.running.quickstart;
      expect(quickstart).not.toBeNull();
      // While it runs, the CLI goes through the running service's database.
      await admin(env, 'orgs', 'create', '--slug', 'kept', '--rate-limit', '42');
      const key = await admin(
        env,
        'keys',
        'create',
        '--org',
        'kept',
        '--name',
        'kept',
        '--scopes',
        'assistant',
      );
      const assistant = await admin(
        env,
        'assistants',
        'create',
        '--org',
        'kept',
        '--name',
        'Kept',
        '--instructions',
        'Hi',
      );
      expect(await keyWorks(first.baseUrl, key.secret)).toBe(true);
      expect(await keyWorks(first.baseUrl, quickstart!.apiKey)).toBe(true);
      const before = {
        organizations: await admin(env, 'orgs', 'list'),
        assistants: await admin(env, 'assistants', 'list', '--org', 'kept'),
        demoAssistants: await admin(env, 'assistants', 'list', '--org', 'demo'),
      };
      await first.running.close();

      // Service stopped: the CLI opens the data directory itself.
      expect(await admin(env, 'orgs', 'list')).toEqual(before.organizations);

      const second = await start({ ...env, QUICKSTART: 'true' });
      try {
        expect(second.running.quickstart).toBeNull(); // not seeded twice
        expect(await admin(env, 'orgs', 'list')).toEqual(before.organizations);
        expect(before.organizations).toEqual(
          expect.arrayContaining([expect.objectContaining({ slug: 'kept', rateLimitPerMinute: 42 })]),
        );
        expect(await admin(env, 'assistants', 'list', '--org', 'kept')).toEqual(before.assistants);
        expect(before.assistants).toEqual([assistant]);
        expect(await admin(env, 'assistants', 'list', '--org', 'demo')).toEqual(before.demoAssistants);
        expect(before.demoAssistants.map((a: { id: string }) => a.id)).toEqual([quickstart!.assistantId]);
        const keys = await admin(env, 'keys', 'list', '--org', 'kept');
        expect(keys).toEqual([expect.objectContaining({ id: key.id, hint: key.hint, revokedAt: null })]);
        expect(await keyWorks(second.baseUrl, key.secret)).toBe(true);
        expect(await keyWorks(second.baseUrl, quickstart!.apiKey)).toBe(true);
      } finally {
        await second.running.close();
      }
    },
    SLOW_TEST_MS,
  );
});

/** Resolves when `signal` is called: what the test waits for before its next step. */
function signal(): { fired: Promise<void>; fire: () => void } {
  let fire!: () => void;
  const fired = new Promise<void>((resolve) => (fire = resolve));
  return { fired, fire };
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

(onPostgres ? describe.skip : describe)('an embedded data directory held by an admin command', () => {
  let dir: string;
  let dataDir: string;
  let lockFile: string;
  let env: Record<string, string>;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchboard-lock-'));
    dataDir = join(dir, 'data');
    lockFile = join(dir, 'data.lock.json');
    env = { EMBEDDED_DATA_DIR: dataDir };
  });
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(
    'makes a starting service and a second command wait, then the service opens the directory itself',
    async () => {
      await admin(env, 'orgs', 'create', '--slug', 'before');
      expect(await exists(lockFile)).toBe(false); // the command closed what it opened

      // An admin command in progress: it owns the directory and its database ends with it.
      const command = await openDatabase({ url: undefined, embeddedDataDir: dataDir, role: 'cli' });
      expect(JSON.parse(await readFile(lockFile, 'utf8'))).toMatchObject({
        pid: process.pid,
        role: 'cli',
        url: command.url,
      });

      const serviceWaits = signal();
      const logger = new (class extends JsonLogger {
        override warn(message: unknown): void {
          if (JSON.stringify(message).includes('held by an admin command')) serviceWaits.fire();
        }
      })('error');
      const service = start(env, logger);
      await serviceWaits.fired;

      const secondWaits = signal();
      let secondStderr = '';
      const second = runAdmin(
        ['orgs', 'create', '--slug', 'queued'],
        {
          stdout: { write: () => true },
          stderr: {
            write: (s: string) => {
              secondStderr += s;
              if (s.includes('held by an admin command')) secondWaits.fire();
              return true;
            },
          },
        },
        env,
      );
      await secondWaits.fired;

      await command.close();
      const { running, baseUrl } = await service;
      try {
        expect(await second).toBe(0);
        expect(secondStderr).toContain('waiting for it');
        // The service owns the directory now: not the command's database, which is gone.
        expect(running.database.url).not.toBe(command.url);
        expect(JSON.parse(await readFile(lockFile, 'utf8'))).toMatchObject({
          pid: process.pid,
          role: 'service',
          url: running.database.url,
        });
        // A command while the service runs works through the service's database, as before.
        const key = await admin(
          env,
          'keys',
          'create',
          '--org',
          'before',
          '--name',
          'k',
          '--scopes',
          'assistant',
        );
        expect(await keyWorks(baseUrl, key.secret)).toBe(true);
        const slugs = (await admin(env, 'orgs', 'list')).map((o: { slug: string }) => o.slug);
        expect(slugs).toEqual(expect.arrayContaining(['before', 'queued']));
      } finally {
        await running.close();
      }
      expect(await exists(lockFile)).toBe(false);
    },
    SLOW_TEST_MS,
  );

  it('gives up after the wait limit with a message naming the holder', async () => {
    const command = await openDatabase({ url: undefined, embeddedDataDir: dataDir, role: 'cli' });
    try {
      await expect(
        openDatabase({ url: undefined, embeddedDataDir: dataDir, role: 'service', maxWaitMs: 400 }),
      ).rejects.toThrow(
        new RegExp(`held by an admin command \\(pid ${process.pid}\\); gave up waiting after 0.4 s`),
      );
      // Still the command's: the service that gave up changed nothing.
      expect(JSON.parse(await readFile(lockFile, 'utf8'))).toMatchObject({ role: 'cli', url: command.url });
    } finally {
      await command.close();
    }
  });

  it('clears the lock of a process that is gone, or of an earlier run with this very pid', async () => {
    const child = spawn(process.execPath, ['-e', '']);
    await once(child, 'exit');
    const stale = [
      { pid: child.pid, role: 'cli', token: 'gone', url: 'postgres://postgres@127.0.0.1:1/postgres' },
      // A restarted container is pid 1 again: same pid, but not a lock this process took.
      {
        pid: process.pid,
        role: 'service',
        token: 'before-restart',
        url: 'postgres://postgres@127.0.0.1:1/postgres',
      },
    ];
    for (const lock of stale) {
      await writeFile(lockFile, JSON.stringify(lock));
      expect(await admin(env, 'orgs', 'list')).toEqual([]);
      expect(await exists(lockFile)).toBe(false);
    }
  });
});

(onPostgres ? describe : describe.skip)(
  'two replicas starting at once on an empty PostgreSQL database',
  () => {
    it('both come up and the schema is migrated exactly once', async () => {
      const database = await createTestDatabase();
      const replicas: { running: RunningApp; baseUrl: string }[] = [];
      try {
        const started = await Promise.allSettled([start(database.env), start(database.env)]);
        for (const result of started) if (result.status === 'fulfilled') replicas.push(result.value);
        for (const result of started) if (result.status === 'rejected') throw result.reason;
        for (const { running, baseUrl } of replicas) {
          expect(running.quickstart).toBeNull(); // never a demo key on PostgreSQL
          const ready = await call(baseUrl, 'GET', '/readyz');
          expect(ready.status).toBe(200);
          expect(ready.body.status).toBe('ready');
        }
        const client = new pg.Client({ connectionString: database.url });
        await client.connect();
        try {
          const { rows } = await client.query<{ name: string }>(
            'SELECT name FROM schema_migrations ORDER BY id',
          );
          expect(rows.map((row) => row.name)).toEqual(MIGRATIONS.map((migration) => migration.name));
        } finally {
          await client.end();
        }
      } finally {
        await Promise.all(replicas.map(({ running }) => running.close()));
        await database.drop();
      }
    });
  },
);
