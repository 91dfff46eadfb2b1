#!/usr/bin/env node
// The docs-check: runs the README's and the docs' runnable blocks the way a reader pastes them.
//
//   npm run docs-check                      # builds, then checks README.md and docs/*.md
//   node scripts/docs-check.mjs README.md   # a built tree, some files (--verbose: blocks' output)
//
// A fenced block is runnable when its info string says so: ```sh runnable (shell, bash) or
// ```js runnable (an ES module, run with node from the repository root so that `import 'openai'`
// resolves as it does for a file saved in the checkout). `file=<path>` after `runnable` also
// requires the block to be exactly that file of the repository (examples/…), so the two cannot
// drift. For each document with runnable blocks, a fresh service is started with `npm start`
// (its build step skipped: this script runs after one) on a temporary embedded database and a
// free port. The `export` lines of its quickstart banner are pasted into one bash session, then
// the document's blocks run in it in order (variables carry over, as in a terminal), under
// `set -eo pipefail`. A block fails on a non-zero exit or when its output holds an error
// envelope (`"error":{`). Finally the service is stopped with SIGTERM to the npm process, which
// must stop the service itself (npm start forwards the signal). Exit code 0 when all passed.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
// Only a guard against a hang (a slow, shared machine takes minutes), never a timing check.
const BOUND_MS = Number(process.env.DOCS_CHECK_BOUND_SECONDS ?? 300) * 1000;
const MARK = '@@docs-check block ';

const verbose = process.argv.includes('--verbose'); // prints every block's output
const named = process.argv.slice(2).filter((arg) => arg !== '--verbose');
const files = named.length
  ? named
  : [
      'README.md',
      ...readdirSync(join(root, 'docs'))
        .filter((name) => name.endsWith('.md'))
        .sort()
        .map((name) => `docs/${name}`),
    ];

/** The runnable fenced blocks of a Markdown text, dedented, with their line and language. */
export function runnableBlocks(text, file) {
  const blocks = [];
  const fence = /^( *)```(\w+)[ \t]+runnable\b([^\n]*)\n([\s\S]*?)^\1```[ \t]*$/gm;
  for (const match of text.matchAll(fence)) {
    const [, indent, lang, options, body] = match;
    const line = text.slice(0, match.index).split('\n').length;
    const code = body
      .split('\n')
      .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l))
      .join('\n');
    const kind = ['sh', 'bash', 'shell'].includes(lang)
      ? 'sh'
      : ['js', 'javascript', 'mjs'].includes(lang)
        ? 'js'
        : null;
    if (!kind) throw new Error(`${file}:${line}: runnable block of unknown language "${lang}"`);
    const sameAs = /\bfile=(\S+)/.exec(options)?.[1];
    blocks.push({ where: `${file}:${line}`, kind, code, sameAs });
  }
  return blocks;
}

function freePort() {
  return new Promise((done, fail) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
    server.on('error', fail);
  });
}

function listening(port) {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => socket.destroy() || done(true));
    socket.once('error', () => done(false));
  });
}

function withBound(promise, what) {
  let timer;
  const bound = new Promise((_, fail) => {
    timer = setTimeout(() => fail(new Error(`${what}: no result within ${BOUND_MS / 1000} s`)), BOUND_MS);
  });
  return Promise.race([promise, bound]).finally(() => clearTimeout(timer));
}

/** `npm start` (without its build step) on a fresh embedded database; resolves with the exports. */
async function startService(env) {
  // A process group of its own, so that a service npm failed to stop can still be cleaned up.
  const child = spawn('npm', ['start', '--ignore-scripts'], {
    cwd: root,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise((done) => child.once('exit', (code, signal) => done(code ?? signal)));
  const started = new Promise((done, fail) => {
    const onData = (chunk) => {
      output += chunk;
      const exports = output.match(/^export (SWITCHBOARD_URL|SWITCHBOARD_KEY|ASSISTANT_ID)=\S+$/gm);
      if (exports?.length === 3) done(exports.join('\n'));
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.stderr.setEncoding('utf8').on('data', onData);
    void exited.then((code) => fail(new Error(`npm start exited (${code}) before its banner:\n${output}`)));
  });
  const service = { child, exited, exports: '' };
  try {
    service.exports = await withBound(started, 'the quickstart banner of npm start');
  } catch (error) {
    await stopService(service, Number(env.PORT));
    throw error;
  }
  return service;
}

/** What a process manager does: SIGTERM to the pid it started. npm must pass it on. */
async function stopService(service, port) {
  service.child.kill('SIGTERM');
  const stopped = await withBound(
    (async () => {
      await service.exited;
      while (await listening(port)) await new Promise((tick) => setTimeout(tick, 100));
    })(),
    'stopping npm start with SIGTERM',
  ).then(
    () => true,
    () => false,
  );
  if (!stopped) {
    try {
      process.kill(-service.child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  return stopped;
}

/** One bash session: the exports, then every block, each announced by a marker line. */
async function runSession(script, env, what) {
  const bash = spawn('bash', ['-c', script], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  bash.stdout.setEncoding('utf8').on('data', (chunk) => (output += chunk));
  bash.stderr.setEncoding('utf8').on('data', (chunk) => (output += chunk));
  const exited = new Promise((done) => bash.once('exit', (code) => done(code)));
  try {
    return { code: await withBound(exited, what), output };
  } catch (error) {
    bash.kill('SIGKILL');
    return { code: `none (${error.message})`, output };
  }
}

/** The blocks' results from the session's output: ok, failed (exit or error envelope), not run. */
function judge(blocks, { code, output }) {
  const segments = new Map();
  for (const segment of output.split(MARK).slice(1)) {
    const newline = segment.indexOf('\n');
    segments.set(segment.slice(0, newline), segment.slice(newline + 1));
  }
  const failures = [];
  const lastRun = Math.max(-1, ...[...segments.keys()].filter((k) => k !== 'end').map(Number));
  blocks.forEach((block, index) => {
    const text = segments.get(String(index));
    if (text === undefined) failures.push(`${block.where}: not run (an earlier block failed)`);
    else if (!segments.has('end') && index === lastRun)
      failures.push(`${block.where}: exit code ${code}\n${text}`);
    else if (/"error"\s*:\s*\{/.test(text)) failures.push(`${block.where}: answered an error\n${text}`);
    else console.log(`ok   ${block.where} (${block.kind})${verbose ? `\n${text}` : ''}`);
  });
  if (!segments.has('end') && lastRun < 0) failures.push(`exit code ${code} before any block\n${output}`);
  return failures;
}

async function checkDocument(file, blocks) {
  for (const block of blocks) {
    if (block.sameAs && readFileSync(join(root, block.sameAs), 'utf8') !== block.code) {
      return [`${block.where}: differs from ${block.sameAs}; copy the file into the block`];
    }
  }
  const data = mkdtempSync(join(tmpdir(), 'switchboard-docs-check-'));
  const env = { ...process.env, PORT: String(await freePort()), EMBEDDED_DATA_DIR: join(data, 'data') };
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'QUICKSTART', 'LOG_LEVEL']) delete env[name];
  try {
    const service = await startService(env);
    let failures;
    try {
      const parts = [service.exports, 'set -eo pipefail'];
      blocks.forEach((block, index) => {
        parts.push(`echo '${MARK}${index}'`);
        parts.push(
          block.kind === 'sh'
            ? block.code
            : `node --input-type=module <<'DOCS_CHECK_JS'\n${block.code}DOCS_CHECK_JS`,
        );
      });
      parts.push(`echo '${MARK}end'`);
      failures = judge(blocks, await runSession(parts.join('\n'), env, file));
    } finally {
      if (!(await stopService(service, Number(env.PORT)))) {
        (failures ??= []).push(`${file}: npm start did not stop the service on SIGTERM`);
      }
    }
    return failures;
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
}

const failures = [];
for (const file of files) {
  const blocks = runnableBlocks(readFileSync(join(root, file), 'utf8'), relative(root, join(root, file)));
  if (blocks.length === 0) continue;
  console.log(`${file}: ${blocks.length} runnable block(s)`);
  failures.push(...(await checkDocument(file, blocks).catch((error) => [`${file}: ${error.message}`])));
}
for (const failure of failures) console.error(`FAIL ${failure}`);
console.log(
  failures.length ? `docs-check: ${failures.length} failure(s)` : 'docs-check: every runnable block ran',
);
process.exit(failures.length ? 1 : 0);
