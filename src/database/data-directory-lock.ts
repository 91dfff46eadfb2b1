import { randomUUID } from 'node:crypto';
import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

// The lock file beside an embedded data directory: who owns the directory (pid, role, url), so
// that no second process opens PGlite's files, and how a lock left by a dead process is cleared.

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
export interface UnreadableLock {
  unreadable: true;
}

/** A lock file's record (or that it is unreadable) and its exact text. */
type ReadLock = { lock: LockRecord | UnreadableLock; text: string };

/** An unreadable lock file older than this is debris (a crash right after creating it). */
const UNREADABLE_GRACE_MS = 5_000;

/**
 * Tokens of the locks this process holds. A lock naming this process's pid with another token
 * belongs to a previous run that had the same pid (a restarted container is pid 1 again).
 */
const heldTokens = new Set<string>();

/**
 * The lock file. Claimed with an exclusive create, so of two processes starting at once exactly
 * one owns the directory; its url is published with an atomic rename, so a reader never sees
 * half a record (except for the instant between the create and its first write).
 */
export class DataDirectoryLock {
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

export function lockFileOf(dataDir: string): string {
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
export async function currentOwner(file: string): Promise<EmbeddedOwner | UnreadableLock | undefined> {
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

export function describeOwner(owner: EmbeddedOwner | UnreadableLock): string {
  if ('unreadable' in owner) return 'another process';
  return owner.role === 'cli'
    ? `an admin command (pid ${owner.pid})`
    : `the service (pid ${owner.pid}), which is still starting`;
}
