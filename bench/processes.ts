import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { clockTicks } from './environment.js';

/**
 * Child processes of the bench and what /proc says about them. Each server runs in its own
 * process so its CPU time and resident memory can be read separately.
 */

const CLOCK_TICKS_PER_SECOND = clockTicks();

export interface Child {
  name: string;
  process: ChildProcess;
  pid: number;
  /** The last lines it wrote, for error reports (everything goes to its log file, if any). */
  output: string[];
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Starts `node <args>` with the open-file limit raised to the hard limit first (thousands of
 * sockets per process in the slow-stream scenario). `exec` keeps the pid and the IPC channel.
 * `node` is another Node.js binary for the measured servers (`--node`); default, this one.
 */
export function startNode(
  name: string,
  args: string[],
  env: Record<string, string>,
  ipc: boolean,
  logFile?: string,
  node: string = process.execPath,
): Child {
  const child = spawn(
    '/bin/sh',
    ['-c', 'ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$0" "$@"', node, ...args],
    {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe', ...(ipc ? (['ipc'] as const) : [])],
    },
  );
  const output: string[] = [];
  const log = logFile ? createWriteStream(logFile, { flags: 'a' }) : undefined;
  const keep = (data: Buffer) => {
    log?.write(data);
    for (const line of data.toString('utf8').split('\n')) {
      if (!line.trim()) continue;
      output.push(line.slice(0, 500));
      if (output.length > 40) output.shift();
    }
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      log?.end();
      resolve();
    }),
  );
  return {
    name,
    process: child,
    pid: child.pid ?? -1,
    output,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      const forced = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(forced);
    },
  };
}

/** Resolves with the first IPC message of the given type, or fails when the child exits first. */
export function waitForMessage<T extends { type: string }>(
  child: Child,
  type: string,
  timeoutMs = 60_000,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: T) => {
      if (message?.type !== type) return;
      cleanup();
      resolve(message);
    };
    const onExit = () => {
      cleanup();
      reject(new Error(`${child.name} exited: ${child.output.slice(-5).join(' | ')}`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`${child.name} did not answer in ${timeoutMs} ms`));
    }, timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      child.process.off('message', onMessage);
      child.process.off('exit', onExit);
    };
    child.process.on('message', onMessage);
    child.process.once('exit', onExit);
  });
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Polls a URL until it answers 200 (the service's readiness probe). */
export async function waitForHttp(url: string, child: Child, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.process.exitCode !== null) {
      throw new Error(
        `${child.name} exited with ${child.process.exitCode}: ${child.output.slice(-8).join(' | ')}`,
      );
    }
    try {
      const res = await fetch(url);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  throw new Error(`${child.name} was not ready at ${url} within ${timeoutMs} ms`);
}

/** User + system CPU time of a process so far, in ms; null when it is gone or unreadable. */
export function cpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may contain spaces; fields restart after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/**
 * CPU time of a process from /proc/<pid>/schedstat (nanoseconds on the CPU), in ms: finer than
 * the clock ticks of /proc/<pid>/stat, for the sub-millisecond work of a database backend per turn.
 */
export function runMs(pid: number): number | null {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return null;
  }
}

/** Resident memory of a process in KiB (VmRSS); null when unreadable. */
export function rssKiB(pid: number): number | null {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

export function procReadable(): boolean {
  return cpuMs(process.pid) !== null;
}
