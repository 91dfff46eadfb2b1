import { mkdir } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  currentOwner,
  DataDirectoryLock,
  describeOwner,
  lockFileOf,
  type EmbeddedRole,
} from './data-directory-lock.js';
import { startPglite, type DatabaseThread, type RunningPglite } from './pglite-host.js';

const WAIT_POLL_MS = 200;
const DEFAULT_MAX_WAIT_MS = 30_000;

/**
 * The embedded database: PGlite (PostgreSQL compiled to WebAssembly) persisting to a data
 * directory, served over the PostgreSQL wire protocol on loopback so that the service uses the
 * same `pg` driver, migrations and queries as against a real server. PGlite runs in a worker
 * thread of its own (see pglite-host.ts), so executing a statement does not block the service.
 *
 * The process that opens the directory owns it and records its pid, role and port in a lock
 * file beside it; other processes never open the files a second time (PGlite does not support
 * that): they connect to the owner's port or wait for it to finish (see `openDatabase`).
 */
export class EmbeddedPostgres {
  private constructor(
    private readonly pglite: RunningPglite,
    private readonly lock: DataDirectoryLock,
  ) {}

  get url(): string {
    return this.pglite.url;
  }

  get thread(): DatabaseThread {
    return this.pglite.thread;
  }

  /** Opens a data directory no other process holds; fails if one does. */
  static async start(dataDir: string, role: EmbeddedRole = 'cli'): Promise<EmbeddedPostgres> {
    const started = await EmbeddedPostgres.tryStart(dataDir, role);
    if (!started) throw new Error(`the embedded data directory ${dataDir} is in use by another process`);
    return started;
  }

  /** Undefined when another process holds the directory. */
  static async tryStart(dataDir: string, role: EmbeddedRole): Promise<EmbeddedPostgres | undefined> {
    await mkdir(dataDir, { recursive: true });
    const lock = await DataDirectoryLock.claim(lockFileOf(dataDir), role);
    if (!lock) return undefined;
    let pglite: RunningPglite;
    try {
      pglite = await startPglite(dataDir);
    } catch (error) {
      await lock.release();
      const reason = error instanceof Error ? error.message : String(error);
      throw new Error(`could not open the embedded database in ${dataDir}: ${reason}`, { cause: error });
    }
    try {
      await lock.publish(pglite.url);
      return new EmbeddedPostgres(pglite, lock);
    } catch (error) {
      await pglite.stop().catch(() => undefined);
      await lock.release();
      throw error;
    }
  }

  /** Closes the database (flushing the data directory), then gives the directory up. */
  async stop(): Promise<void> {
    try {
      await this.pglite.stop();
    } finally {
      await this.lock.release();
    }
  }
}

export interface DatabaseHandle {
  url: string;
  embedded: boolean;
  /** Only when this process started the embedded database: the thread that executes its statements. */
  thread?: DatabaseThread;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  url: string | undefined;
  embeddedDataDir: string;
  /** What this process is; decides whether it may use another process's embedded database. */
  role: EmbeddedRole;
  /** Called once if the data directory is busy and this process starts waiting for it. */
  onWait?: (waitingFor: string) => void;
  /** How long to wait for a busy data directory (default 30 seconds). */
  maxWaitMs?: number;
}

/**
 * Resolves where the database is: the configured server, or the embedded one in the data
 * directory. An embedded database a running service serves is shared (the admin CLI works on the
 * service's data while it runs). One that a command owns is never shared, because it goes away
 * when the command ends: a service or another command waits (polling every 200 ms, 30 s at most)
 * until the command is done and then opens the directory itself.
 */
export async function openDatabase(options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  if (options.url) return { url: options.url, embedded: false, close: async () => {} };
  const dataDir = options.embeddedDataDir;
  const lockFile = lockFileOf(dataDir);
  const maxWaitMs = options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
  const deadline = Date.now() + maxWaitMs;
  let waiting = false;
  for (;;) {
    const owner = await currentOwner(lockFile);
    if (!owner) {
      const embedded = await EmbeddedPostgres.tryStart(dataDir, options.role);
      if (embedded) {
        return { url: embedded.url, embedded: true, thread: embedded.thread, close: () => embedded.stop() };
      }
      continue; // another process claimed it first: look at who
    }
    if (!('unreadable' in owner) && owner.role === 'service' && owner.url) {
      return { url: owner.url, embedded: true, close: async () => {} };
    }
    const waitingFor = describeOwner(owner);
    if (Date.now() >= deadline) {
      throw new Error(
        `the embedded database in ${dataDir} is held by ${waitingFor}; gave up waiting after ` +
          `${maxWaitMs / 1000} s. Let it finish and try again (if no such process exists, delete ${lockFile}).`,
      );
    }
    if (!waiting) options.onWait?.(waitingFor);
    waiting = true;
    await sleep(WAIT_POLL_MS);
  }
}
