import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

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
    return {
      env: { EMBEDDED_DATA_DIR: join(dir, 'data') },
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
