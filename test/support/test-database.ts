import { createHash, randomBytes } from 'node:crypto';
import { cp, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createApp } from '../../src/bootstrap/create-app.js';
import { loadConfig } from '../../src/config/app-config.js';

export interface TestDatabase {
  /** Environment for loadConfig: DATABASE_URL for a server, EMBEDDED_DATA_DIR otherwise. */
  env: Record<string, string>;
  url?: string;
  drop(): Promise<void>;
}

/**
 * A database of its own for one test file: a fresh database on the server named by
 * DATABASE_URL (CI), or a fresh embedded data directory (a laptop with no server).
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    const dir = await mkdtemp(join(tmpdir(), 'switchboard-test-'));
    const dataDir = join(dir, 'data');
    await cp(await migratedEmbeddedTemplate(), dataDir, { recursive: true });
    return {
      env: { EMBEDDED_DATA_DIR: dataDir },
      drop: () => rm(dir, { recursive: true, force: true }),
    };
  }
  const name = `switchboard_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    env: { DATABASE_URL: url.toString() },
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

let template: Promise<string> | undefined;

/**
 * An embedded data directory with every migration applied and no rows, built once and copied
 * for each test database: creating and migrating a PGlite cluster costs seconds, copying it a
 * fraction of that. Keyed by the migrations' sources and the PGlite version, so a changed
 * migration or an upgrade builds a new one; shared by the jest workers (and later runs) through
 * an atomic rename. Tests about a brand-new directory set EMBEDDED_DATA_DIR themselves.
 */
function migratedEmbeddedTemplate(): Promise<string> {
  template ??= buildTemplate();
  return template;
}

async function buildTemplate(): Promise<string> {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const hash = createHash('sha256');
  const pglite = JSON.parse(
    await readFile(join(root, 'node_modules/@electric-sql/pglite/package.json'), 'utf8'),
  ) as { version: string };
  hash.update(pglite.version);
  const migrations = join(root, 'migrations');
  for (const file of (await readdir(migrations)).sort()) {
    hash.update(file);
    hash.update(await readFile(join(migrations, file)));
  }
  const final = join(tmpdir(), `switchboard-test-template-${hash.digest('hex').slice(0, 16)}`);
  const ready = join(final, 'ready');
  if (await exists(ready)) return join(final, 'data');

  const building = `${final}.${process.pid}.${randomBytes(4).toString('hex')}`;
  const running = await createApp(
    loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      QUICKSTART: 'false',
      LOG_LEVEL: 'error',
      EMBEDDED_DATA_DIR: join(building, 'data'),
    }),
    { logger: false },
  );
  await running.close();
  await writeFile(join(building, 'ready'), '');
  try {
    await rename(building, final);
  } catch {
    // Another worker finished first: use its copy.
    await rm(building, { recursive: true, force: true });
    if (!(await exists(ready))) throw new Error(`could not prepare the embedded template ${final}`);
  }
  return join(final, 'data');
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}
