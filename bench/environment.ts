import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';

/** Where the bench's service keeps its data: a fresh database, removed afterwards. */
export interface BenchDatabase {
  kind: 'postgresql' | 'embedded';
  /** PostgreSQL: the server's URL (as given) and the bench database's name, for pg_waldump. */
  server?: { url: string; database: string };
  /** Environment for the service: DATABASE_URL or EMBEDDED_DATA_DIR. */
  env: Record<string, string>;
  /** Server version, e.g. "PostgreSQL 15.20" (embedded: PGlite's). */
  version: string;
  /** Host and port a wire-protocol proxy should forward to (embedded: once the service runs). */
  address(): Promise<{ host: string; port: number; url: string }>;
  /** Server process ids serving the bench database (PostgreSQL only), for their CPU time; optionally one application's. */
  backendPids(applicationName?: string): Promise<number[]>;
  drop(): Promise<void>;
}

export async function createBenchDatabase(
  serverUrl: string | undefined,
  keep: boolean,
): Promise<BenchDatabase> {
  if (!serverUrl) {
    const dir = await mkdtemp(join(os.tmpdir(), 'switchboard-bench-'));
    const dataDir = join(dir, 'data');
    return {
      kind: 'embedded',
      env: { EMBEDDED_DATA_DIR: dataDir },
      version: `PGlite ${packageVersion('@electric-sql/pglite')} (embedded in the service process)`,
      async address() {
        // The service owns the data directory and publishes its loopback port in a lock file.
        const lock = JSON.parse(await readFile(join(dir, 'data.lock.json'), 'utf8')) as { url: string };
        const url = new URL(lock.url);
        return { host: url.hostname, port: Number(url.port), url: lock.url };
      },
      backendPids: () => Promise.resolve([]),
      drop: () => (keep ? Promise.resolve() : rm(dir, { recursive: true, force: true })),
    };
  }
  const name = `switchboard_bench_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  let version: string;
  try {
    await admin.query(`CREATE DATABASE ${name}`);
    const row = await admin.query<{ server_version: string }>('SHOW server_version');
    version = `PostgreSQL ${row.rows[0].server_version}`;
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  return {
    kind: 'postgresql',
    server: { url: serverUrl, database: name },
    env: { DATABASE_URL: databaseUrl },
    version,
    address: () => Promise.resolve({ host: url.hostname, port: Number(url.port || 5432), url: databaseUrl }),
    async backendPids(applicationName?: string) {
      const client = new pg.Client({ connectionString: serverUrl });
      try {
        await client.connect();
        const rows = await client.query<{ pid: number }>(
          'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND ($2::text IS NULL OR application_name = $2)',
          [name, applicationName ?? null],
        );
        return rows.rows.map((row) => row.pid);
      } catch {
        return [];
      } finally {
        await client.end().catch(() => undefined);
      }
    },
    async drop() {
      if (keep) return;
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

export function packageVersion(name: string): string {
  // Read the file directly: packages with an "exports" map do not export package.json.
  try {
    const text = readFileSync(resolve('node_modules', name, 'package.json'), 'utf8');
    return (JSON.parse(text) as { version?: string }).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  kernel: string;
  node: string;
  packages: Record<string, string>;
  commit: string;
  database: string;
  openFileLimit: string;
}

export function machineInfo(database: string): MachineInfo {
  const run = (command: string, args: string[]): string => {
    try {
      return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return 'unknown';
    }
  };
  const dirty = run('git', ['status', '--porcelain', '--untracked-files=no']) ? ' (with local changes)' : '';
  return {
    cpus: os.availableParallelism(),
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    kernel: `${os.type()} ${os.release()}`,
    node: process.version,
    packages: Object.fromEntries(
      ['@nestjs/core', 'express', 'typeorm', 'pg', 'openai', '@electric-sql/pglite'].map((name) => [
        name,
        packageVersion(name),
      ]),
    ),
    commit: `${run('git', ['rev-parse', '--short', 'HEAD'])}${dirty}`,
    database,
    openFileLimit: run('/bin/sh', ['-c', 'ulimit -Hn']),
  };
}

/** Clock ticks per second of /proc CPU times (almost always 100). */
export function clockTicks(): number {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
}

/** CPU time (ms) of the whole machine, of this process and its reaped children, and of PostgreSQL. */
export interface CpuAccount {
  machineBusyMs: number;
  /** Time the hypervisor gave this machine's vCPUs to other guests (`steal`). */
  machineStealMs: number;
  machineTotalMs: number;
  benchMs: number;
  postgresMs: number;
}

/**
 * Reads the CPU accounts used to tell how much other work shared the machine: machine busy time
 * minus the bench's own processes (this one and its children, which are reaped before the end)
 * minus PostgreSQL's server processes (busy because of the bench when DATABASE_URL is local).
 */
export function cpuAccount(): CpuAccount {
  const tick = 1000 / clockTicks();
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system] = cpu;
  // Interrupt time (loopback networking runs there) and steal belong to no process: left out.
  const busy = user + nice + system;
  const own = processTimes('self');
  let postgres = 0;
  for (const entry of readdirSync('/proc')) {
    if (/^\d+$/.test(entry)) postgres += processTimes(entry, 'postgres');
  }
  return {
    machineBusyMs: busy * tick,
    machineStealMs: (cpu[7] ?? 0) * tick,
    machineTotalMs: cpu.slice(0, 8).reduce((sum, value) => sum + (value || 0), 0) * tick,
    benchMs: own * tick,
    postgresMs: postgres * tick,
  };
}

/** utime + stime (+ reaped children's for this process), in clock ticks; 0 if unreadable or not `name`. */
function processTimes(pid: string, name?: string): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (name !== undefined && stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== name) return 0;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const times = Number(fields[11]) + Number(fields[12]);
    return name === undefined ? times + Number(fields[13]) + Number(fields[14]) : times;
  } catch {
    return 0;
  }
}

/**
 * Share of the machine's CPU time between two accounts that the hypervisor gave to other guests.
 * On a shared virtual machine this is the noise no process list shows.
 */
export function stolenShare(before: CpuAccount, after: CpuAccount): number {
  const total = after.machineTotalMs - before.machineTotalMs;
  return total <= 0 ? 0 : Math.max(0, (after.machineStealMs - before.machineStealMs) / total);
}

/** Share of the machine's CPU time between two accounts used by processes outside the bench. */
export function otherShare(before: CpuAccount, after: CpuAccount): number {
  const total = after.machineTotalMs - before.machineTotalMs;
  if (total <= 0) return 0;
  const other =
    after.machineBusyMs -
    before.machineBusyMs -
    (after.benchMs - before.benchMs) -
    (after.postgresMs - before.postgresMs);
  return Math.max(0, other / total);
}
