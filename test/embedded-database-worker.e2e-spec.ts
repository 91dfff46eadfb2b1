import { access, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/database/embedded-postgres.js';
import {
  buildService,
  spawnService,
  startService,
  type ServiceBuild,
  type ServiceProcess,
} from './support/built-service.js';
import { call } from './support/http.js';

/**
 * The embedded database runs in a worker thread of the built service (dist/), and on the calling
 * thread when the TypeScript sources run under jest (no compiled worker script there). These tests
 * run the same with or without DATABASE_URL: they are about the embedded database only.
 */

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** A quickstart banner's `export` line's value, as a reader pastes it (README, Quickstart). */
async function exported(service: ServiceProcess, variable: string): Promise<string> {
  const line = await service.logged((candidate) => String(candidate.msg).startsWith(`export ${variable}=`));
  return String(line.msg).slice(`export ${variable}=`.length).trim();
}

/** A data directory PGlite cannot open: it claims to be PostgreSQL's but holds nothing else. */
async function damagedDataDir(dir: string): Promise<string> {
  const dataDir = join(dir, 'data');
  await mkdir(dataDir, { recursive: true });
  await writeFile(join(dataDir, 'PG_VERSION'), 'garbage\n');
  return dataDir;
}

describe('the embedded database of the built service', () => {
  let build: ServiceBuild;
  let dir: string;

  beforeAll(async () => {
    build = await buildService();
  }, 180_000);
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchboard-worker-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('runs in a worker thread, and what it stored survives a SIGTERM and a restart', async () => {
    const env = { EMBEDDED_DATA_DIR: join(dir, 'data'), QUICKSTART: 'true' };
    const lockFile = join(dir, 'data.lock.json');
    const first = await startService(build, env);
    try {
      expect(await first.logged('embedded database started')).toMatchObject({
        level: 'log',
        thread: 'worker',
      });
      const apiKey = await exported(first, 'SWITCHBOARD_KEY');
      const assistantId = await exported(first, 'ASSISTANT_ID');

      const ready = await call(first.baseUrl, 'GET', '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body.status).toBe('ready');
      const created = await call(first.baseUrl, 'POST', '/v1/responses', {
        key: apiKey,
        body: { model: assistantId, input: 'hello' },
      });
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({ status: 'completed', model: `asst_${assistantId}` });
      expect(created.body.output_text).toContain('Switchboard demo assistant');
      expect(JSON.parse(await readFile(lockFile, 'utf8'))).toMatchObject({
        pid: first.child.pid,
        role: 'service',
      });

      first.child.kill('SIGTERM');
      expect(await first.exit).toBe(0);
      expect(first.logs.map((line) => line.msg)).toContain('shut down cleanly');
      expect(await exists(lockFile)).toBe(false);

      const second = await startService(build, env);
      try {
        expect(await second.logged('embedded database started')).toMatchObject({ thread: 'worker' });
        const read = await call(second.baseUrl, 'GET', `/v1/responses/${created.body.id}`, { key: apiKey });
        expect(read.status).toBe(200);
        expect(read.body).toEqual(created.body);
        expect(second.logs.some((line) => String(line.msg).startsWith('export SWITCHBOARD_KEY='))).toBe(
          false,
        ); // not seeded twice

        second.child.kill('SIGTERM');
        expect(await second.exit).toBe(0);
        expect(await exists(lockFile)).toBe(false);
      } finally {
        if (second.child.exitCode === null) second.child.kill('SIGKILL');
      }
    } finally {
      if (first.child.exitCode === null) first.child.kill('SIGKILL');
    }
  }, 180_000); // two starts of the built service, each migrating an embedded database

  it('vacuums its busy tables from the worker thread (it has no autovacuum)', async () => {
    const env = {
      EMBEDDED_DATA_DIR: join(dir, 'data'),
      QUICKSTART: 'true',
      EMBEDDED_MAINTENANCE_SECONDS: '1',
      LOG_LEVEL: 'debug',
    };
    const service = await startService(build, env);
    try {
      const apiKey = await exported(service, 'SWITCHBOARD_KEY');
      const assistantId = await exported(service, 'ASSISTANT_ID');
      // One thread of 60 turns: each moves the conversation's head, leaving its old row dead.
      let previous: string | undefined;
      for (let turn = 0; turn < 60; turn++) {
        const reply = await call(service.baseUrl, 'POST', '/v1/responses', {
          key: apiKey,
          body: { model: assistantId, input: 'hello', previous_response_id: previous },
        });
        expect(reply.status).toBe(200);
        previous = reply.body.id;
      }
      const vacuumed = await service.logged(
        (line) => line.msg === 'vacuumed and analyzed a table' && line.table === 'conversations',
      );
      expect(vacuumed).toMatchObject({ level: 'debug', context: 'EmbeddedMaintenance' });
      expect(
        service.logs.filter((line) => line.context === 'EmbeddedMaintenance' && line.level !== 'debug'),
      ).toEqual([]);
    } finally {
      service.child.kill('SIGTERM');
      await service.exit;
    }
  }, 120_000);

  it('exits 1 with a clear message when the data directory is damaged, leaving no lock', async () => {
    const dataDir = await damagedDataDir(dir);
    const service = await spawnService(build, { EMBEDDED_DATA_DIR: dataDir });
    expect(await service.exit).toBe(1);
    expect(service.stderr()).toContain(
      `Failed to start: could not open the embedded database in ${dataDir}: `,
    );
    expect(await exists(join(dir, 'data.lock.json'))).toBe(false);
  });
});

describe('the embedded database under jest (TypeScript sources, no compiled worker)', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchboard-in-thread-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('runs on the calling thread', async () => {
    const database = await openDatabase({ url: undefined, embeddedDataDir: join(dir, 'data'), role: 'cli' });
    try {
      expect(database).toMatchObject({ embedded: true, thread: 'main' });
    } finally {
      await database.close();
    }
  }, 180_000); // creating a data directory is an initdb in WebAssembly: minutes on a loaded machine

  it('rejects a damaged data directory with a clear message and releases the lock', async () => {
    const dataDir = await damagedDataDir(dir);
    await expect(openDatabase({ url: undefined, embeddedDataDir: dataDir, role: 'cli' })).rejects.toThrow(
      `could not open the embedded database in ${dataDir}: `,
    );
    expect(await exists(join(dir, 'data.lock.json'))).toBe(false);
  });
});
