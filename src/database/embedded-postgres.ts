import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/**
 * The embedded database: PGlite (PostgreSQL compiled to WebAssembly) persisting to a data
 * directory, served over the PostgreSQL wire protocol on loopback so that the service uses the
 * same `pg` driver, migrations and queries as against a real server.
 *
 * The process that opens the directory owns it and records its port in a lock file; another
 * process (the admin CLI while the service runs) connects to that port instead of opening the
 * files a second time, which PGlite does not support.
 */
export class EmbeddedPostgres {
  private constructor(
    private readonly db: PGlite,
    private readonly server: PGLiteSocketServer,
    private readonly lockFile: string,
    readonly url: string,
  ) {}

  static async start(dataDir: string): Promise<EmbeddedPostgres> {
    await mkdir(dataDir, { recursive: true });
    const lockFile = join(dataDir, '..', `${lockName(dataDir)}.lock.json`);
    const db = await PGlite.create(dataDir);
    // The socket server's multiplexer keeps a transaction's statements on its connection.
    const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 32 });
    await server.start();
    const port = Number(server.getServerConn().split(':').pop());
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    await writeFile(lockFile, JSON.stringify({ pid: process.pid, url }));
    return new EmbeddedPostgres(db, server, lockFile, url);
  }

  async stop(): Promise<void> {
    await this.server.stop();
    await this.db.close();
    await rm(this.lockFile, { force: true });
  }
}

function lockName(dataDir: string): string {
  return (
    dataDir
      .replace(/[/\\]+$/, '')
      .split(/[/\\]/)
      .pop() ?? 'data'
  );
}

/** The URL of an embedded database another live process already serves from `dataDir`. */
export async function findRunningEmbedded(dataDir: string): Promise<string | undefined> {
  const lockFile = join(dataDir, '..', `${lockName(dataDir)}.lock.json`);
  let owner: { pid: number; url: string };
  try {
    owner = JSON.parse(await readFile(lockFile, 'utf8')) as { pid: number; url: string };
  } catch {
    return undefined;
  }
  try {
    process.kill(owner.pid, 0);
    return owner.url;
  } catch {
    return undefined; // stale lock of a process that died
  }
}

export interface DatabaseHandle {
  url: string;
  embedded: boolean;
  close(): Promise<void>;
}

/**
 * Resolves where the database is: the configured server, an embedded one already served by a
 * running process, or a new embedded one owned by this process.
 */
export async function openDatabase(options: {
  url: string | undefined;
  embeddedDataDir: string;
}): Promise<DatabaseHandle> {
  if (options.url) return { url: options.url, embedded: false, close: async () => {} };
  const running = await findRunningEmbedded(options.embeddedDataDir);
  if (running) return { url: running, embedded: true, close: async () => {} };
  const embedded = await EmbeddedPostgres.start(options.embeddedDataDir);
  return { url: embedded.url, embedded: true, close: () => embedded.stop() };
}
