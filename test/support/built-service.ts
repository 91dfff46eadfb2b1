import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { createApp, type RunningApp } from '../../src/bootstrap/create-app.js';
import { loadConfig } from '../../src/config/app-config.js';
import type { TestDatabase } from './test-database.js';

/**
 * The service as users run it: compiled with tsc and started as `node dist/src/main.js` in a
 * process of its own. The build goes to a directory under the ignored .switchboard/ (never dist/,
 * which a developer's own build may be writing), named by a hash of what tsc reads: the test files
 * of one run, and later runs of an unchanged tree, share it instead of compiling the service again
 * (about 15 s of CPU each). Type errors elsewhere in the tree do not stop tsc from emitting;
 * `npm run typecheck` reports them.
 */
export interface ServiceBuild {
  dir: string;
}

const BUILD_INPUTS = ['src', 'migrations', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];
/** A build another worker started this long ago without finishing is taken to have died. */
const STALE_BUILD_MS = 10 * 60_000;

export async function buildService(): Promise<ServiceBuild> {
  const root = resolve('.switchboard');
  const dir = join(root, `test-build-${await sourceHash()}`);
  const ready = join(dir, 'src', 'main.js');
  const lock = `${dir}.building`;
  for (;;) {
    if (existsSync(ready)) return { dir };
    await mkdir(root, { recursive: true });
    const owned = await mkdir(lock).then(
      () => true,
      () => false,
    );
    if (owned) break;
    const started = await stat(lock).then(
      (info) => info.mtimeMs,
      () => 0,
    );
    if (started && Date.now() - started > STALE_BUILD_MS) await rm(lock, { recursive: true, force: true });
    await new Promise((done) => setTimeout(done, 500));
  }
  try {
    const building = `${dir}.${process.pid}`;
    await promisify(execFile)(
      process.execPath,
      [
        'node_modules/typescript/bin/tsc',
        '-p',
        'tsconfig.build.json',
        '--outDir',
        building,
        '--tsBuildInfoFile',
        join(building, '.tsbuildinfo'),
      ],
      { maxBuffer: 16 * 1024 * 1024 },
    ).catch(() => undefined);
    if (!existsSync(join(building, 'src', 'main.js'))) throw new Error('the build produced no src/main.js');
    await removeOtherBuilds(root, dir);
    await rename(building, dir);
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
  return { dir };
}

async function sourceHash(): Promise<string> {
  const hash = createHash('sha256');
  const add = async (path: string): Promise<void> => {
    const info = await stat(path);
    if (info.isDirectory()) {
      for (const name of (await readdir(path)).sort()) await add(join(path, name));
    } else {
      hash.update(path);
      hash.update(await readFile(path));
    }
  };
  for (const input of BUILD_INPUTS) await add(input);
  return hash.digest('hex').slice(0, 16);
}

/** Builds of earlier trees, finished or abandoned, so that .switchboard/ does not grow each edit. */
async function removeOtherBuilds(root: string, keep: string): Promise<void> {
  for (const name of await readdir(root)) {
    const path = join(root, name);
    if (!name.startsWith('test-build-') || path === keep || name.endsWith('.building')) continue;
    const info = await stat(path).catch(() => undefined);
    if (info && Date.now() - info.mtimeMs > STALE_BUILD_MS) await rm(path, { recursive: true, force: true });
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
}

export type LogLine = Record<string, unknown>;

export interface ServiceProcess {
  baseUrl: string;
  child: ChildProcess;
  exit: Promise<number | null>;
  /** Stdout, one entry a line: the JSON log lines, and `{msg: text}` for plain lines. */
  logs: LogLine[];
  stderr(): string;
  /** Resolves with the first line (already written or still to come) whose msg is `msg` or that matches. */
  logged(msg: string | ((line: LogLine) => boolean)): Promise<LogLine>;
}

/** Spawns the built service; it may still be starting (or failing to) when this returns. */
export async function spawnService(
  build: ServiceBuild,
  env: Record<string, string>,
): Promise<ServiceProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [join(build.dir, 'src', 'main.js')], {
    env: {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      PORT: String(port),
      QUICKSTART: 'false',
      LOG_LEVEL: 'log',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: LogLine[] = [];
  const waiters: { matches: (line: LogLine) => boolean; done: (line: LogLine) => void }[] = [];
  let buffered = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const text of lines) {
      let line: LogLine;
      try {
        line = JSON.parse(text) as LogLine;
      } catch {
        line = { msg: text };
      }
      logs.push(line);
      for (const waiter of waiters.filter((candidate) => candidate.matches(line))) waiter.done(line);
    }
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exit = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    child,
    exit,
    logs,
    stderr: () => stderr,
    logged: (msg) =>
      new Promise((done) => {
        const matches = typeof msg === 'string' ? (line: LogLine) => line.msg === msg : msg;
        const seen = logs.find(matches);
        if (seen) done(seen);
        else waiters.push({ matches, done });
      }),
  };
}

/** Spawns the built service and resolves once it listens; fails if it exits first. */
export async function startService(
  build: ServiceBuild,
  env: Record<string, string>,
): Promise<ServiceProcess> {
  const service = await spawnService(build, env);
  const started = await Promise.race([
    service.logged((line) => String(line.msg).startsWith('Switchboard listening')).then(() => true),
    service.exit.then(() => false),
  ]);
  if (!started) {
    throw new Error(`the service did not start: ${JSON.stringify(service.logs)} ${service.stderr()}`);
  }
  return service;
}

/**
 * Runs `work` on `database` through the service's own classes in this process (to seed it before a
 * built service takes it over, or to read it after), closing that app afterwards.
 */
export async function withInProcessApp<T>(
  database: TestDatabase,
  work: (app: RunningApp['app']) => Promise<T>,
): Promise<T> {
  const running = await createApp(
    loadConfig({ PORT: '0', HOST: '127.0.0.1', QUICKSTART: 'false', ...database.env }),
    { logger: false },
  );
  try {
    return await work(running.app);
  } finally {
    await running.close();
  }
}
