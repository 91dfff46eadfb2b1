import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startPglite, type DatabaseThread, type RunningPglite } from './pglite-host.js';

/**
 * Who opens an embedded data directory: the long-running service, or a short-lived command
 * (the admin CLI, the migration CLI) whose database goes away when it ends.
 */
export type EmbeddedRole = 'service' | 'cli';

/** The owner of a data directory, as its lock file records it. */
export interface EmbeddedOwner {
  pid: number;
  role: EmbeddedRole;
  /** Where it serves the database; absent while the owner is still opening it. */
  url?: string;
}

interface LockRecord extends EmbeddedOwner {
  /** Tells this owner apart from an earlier process that had the same pid. */
  token: string;
}

/** A lock file that cannot be read as a record: still being written, or left behind broken. */
interface UnreadableLock {
  unreadable: true;
}

/** A lock file's record (or that it is unreadable) and its exact text. */
type ReadLock = { lock: LockRecord | UnreadableLock; text: string };

const WAIT_POLL_MS = 200;
const DEFAULT_MAX_WAIT_MS = 30_000;
/** An unreadable lock file older than this is debris (a crash right after creating it). */
const UNREADABLE_GRACE_MS = 5_000;

/**
 * Tokens of the locks this process holds. A lock naming this process's pid with another token
 * belongs to a previous run that had the same pid (a restarted container is pid 1 again).
 */
const heldTokens = new Set<string>();

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

/**
 * The lock file. Claimed with an exclusive create, so of two processes starting at once exactly
 * one owns the directory; its url is published with an atomic rename, so a reader never sees
 * half a record (except for the instant between the create and its first write).
 */
class DataDirectoryLock {
  private constructor(
    private readonly file: string,
    private record: LockRecord,
  ) {}

  static async claim(file: string, role: EmbeddedRole): Promise<DataDirectoryLock | undefined> {
    const record: LockRecord = { pid: process.pid, role, token: randomUUID() };
    try {
      await writeFile(file, JSON.stringify(record), { flag: 'wx' });
    } catch (error) {
      if (errorCode(error) === 'EEXIST') return undefined;
      throw error;
    }
    heldTokens.add(record.token);
    return new DataDirectoryLock(file, record);
  }

  async publish(url: string): Promise<void> {
    this.record = { ...this.record, url };
    const temporary = `${this.file}.${this.record.token}.tmp`;
    await writeFile(temporary, JSON.stringify(this.record));
    await rename(temporary, this.file);
  }

  async release(): Promise<void> {
    heldTokens.delete(this.record.token);
    const current = await readLock(this.file);
    // Never remove a lock that is no longer ours.
    if (current && 'token' in current.lock && current.lock.token === this.record.token) {
      await rm(this.file, { force: true });
    }
  }
}

function lockFileOf(dataDir: string): string {
  const name =
    dataDir
      .replace(/[/\\]+$/, '')
      .split(/[/\\]/)
      .pop() ?? 'data';
  return join(dataDir, '..', `${name}.lock.json`);
}

function errorCode(error: unknown): unknown {
  return (error as { code?: unknown }).code;
}

async function readLock(file: string): Promise<ReadLock | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const value = JSON.parse(text) as Partial<LockRecord>;
    if (typeof value.pid === 'number') {
      const lock: LockRecord = {
        pid: value.pid,
        // Lock files of earlier versions have neither role nor token; the service wrote them.
        role: value.role === 'cli' ? 'cli' : 'service',
        token: typeof value.token === 'string' ? value.token : '',
        url: typeof value.url === 'string' ? value.url : undefined,
      };
      return { lock, text };
    }
  } catch {
    // fall through: unreadable
  }
  return { lock: { unreadable: true }, text };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errorCode(error) === 'EPERM'; // it exists but belongs to another user
  }
}

function isStale(record: LockRecord): boolean {
  if (record.pid === process.pid) return !heldTokens.has(record.token);
  return !isAlive(record.pid);
}

/**
 * Removes a lock left by a process that is gone. It is first renamed away (only one process
 * wins a rename) and put back if what was moved is not the stale file that was judged, which
 * happens when another process cleared it and claimed the directory in between.
 */
async function removeStale(file: string, judged: string): Promise<void> {
  const grave = `${file}.${randomUUID()}.stale`;
  try {
    await rename(file, grave);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return;
    throw error;
  }
  const moved = await readFile(grave, 'utf8');
  if (moved !== judged) await writeFile(file, moved, { flag: 'wx' }).catch(() => undefined);
  await rm(grave, { force: true });
}

/** The live owner of the directory, clearing a stale lock; undefined when the directory is free. */
async function currentOwner(file: string): Promise<EmbeddedOwner | UnreadableLock | undefined> {
  const read = await readLock(file);
  if (!read) return undefined;
  const { lock, text } = read;
  if ('unreadable' in lock) {
    const age = await stat(file).then(
      (info) => Date.now() - info.mtimeMs,
      () => 0,
    );
    if (age < UNREADABLE_GRACE_MS) return lock;
  } else if (!isStale(lock)) {
    return { pid: lock.pid, role: lock.role, url: lock.url };
  }
  await removeStale(file, text);
  return currentOwner(file);
}

function describeOwner(owner: EmbeddedOwner | UnreadableLock): string {
  if ('unreadable' in owner) return 'another process';
  return owner.role === 'cli'
    ? `an admin command (pid ${owner.pid})`
    : `the service (pid ${owner.pid}), which is still starting`;
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
