// 32 clients of one-word JSON turns against relay-pg, the stack floor (bench/stack-floor.mjs) and the
// service, interleaved phases in one run, each on its own backends of one fresh PostgreSQL database
// (docs/benchmarks.md, round "floor"). CPU per turn = the server process + its backends (/proc).
// usage: [DATABASE_URL=<server>] [NODE=<node for the servers>] [BASE=<other worktree>] [STRACE=1]
//   node bench/floor-compare.mjs <worktree> [seconds] [rounds] [clients]
// (after `npm run build && npx tsc -p bench/tsconfig.json` in <worktree>, and in BASE)
// BASE: a second service arm, that worktree's build on the same database ("service (base)"), in the
//   same interleaved phases: before/after of one run (docs/benchmarks.md, round "lowload"). More
//   builds, comma-separated, each add an arm named after their directory.
// STRACE=1: each phase also counts the server's system calls (`strace -f -c`, all threads) and prints
//   those made at least once per 20 turns, per turn (strace slows the server: read counts, not times).
// "main" is the CPU of the server's main thread alone (the rest: V8's and libuv's worker threads).
import { Buffer } from 'node:buffer';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { URL } from 'node:url';

const [root, secondsArg = '8', roundsArg = '3', clientsArg = '32'] = process.argv.slice(2);
if (!root) throw new Error('usage: node bench/floor-compare.mjs <worktree> [seconds] [rounds] [clients]');
const pg = createRequire(`${root}/package.json`)('pg');
const node = process.env.NODE ?? process.execPath;
const server = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
const database = `bench_floor_${process.pid}`;
const url = Object.assign(new URL(server), { pathname: `/${database}` }).href;
const BASE_PORT = Number(process.env.BASE_PORT ?? 18080);
const TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));
const RELAY_ASSISTANT = '11111111-1111-4111-8111-111111111111';
const MODEL = 'bench-t20-n1-i0';
const INSTRUCTIONS = 'You are a helpful assistant.';

/** CPU ms of a process (all its threads), or of one of its threads. */
const cpuMs = (pid, thread) => {
  const fields = readFileSync(thread ? `/proc/${pid}/task/${thread}/stat` : `/proc/${pid}/stat`, 'utf8')
    .split(') ')[1]
    .split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS;
};
const children = [];
function start(name, args, env, ready) {
  return new Promise((resolve, reject) => {
    const child = spawn(node, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    child.once('exit', (code) => reject(new Error(`${name} exited (${code})`)));
    child.stderr.on('data', (data) => process.stderr.write(`[${name}] ${data}`));
    if (ready) child.stdout.on('data', (data) => ready.test(String(data)) && resolve(child));
    else resolve(child);
  });
}
const withApplication = (href, name) => {
  const withName = new URL(href);
  withName.searchParams.set('application_name', name);
  return withName.href;
};
/** `strace -f -c` on a process until the returned function is called; resolves to calls per syscall. */
function straceCounts(pid) {
  const out = `/tmp/floor-compare-strace-${process.pid}-${pid}`;
  const tracer = spawn('strace', ['-f', '-c', '-o', out, '-p', String(pid)], { stdio: 'ignore' });
  // Settled however strace ends: not installed ('error'), refused by ptrace (exits at once), stopped.
  const exited = new Promise((resolve) => {
    tracer.once('error', resolve);
    tracer.once('exit', resolve);
  });
  const attached = new Promise((resolve) => setTimeout(resolve, 300));
  return {
    attached,
    async stop() {
      if (tracer.exitCode === null && tracer.pid !== undefined) tracer.kill('SIGINT');
      await exited;
      if (!existsSync(out)) {
        console.warn(`strace counted nothing for ${pid} (not installed, or not allowed to attach)`);
        return new Map();
      }
      const calls = new Map();
      for (const line of readFileSync(out, 'utf8').split('\n')) {
        const cols = line.trim().split(/\s+/);
        if (cols.length >= 5 && /^\d/.test(cols[0]) && /^[a-z_0-9]+$/.test(cols.at(-1))) {
          calls.set(cols.at(-1), Number(cols[3]));
        }
      }
      rmSync(out, { force: true });
      return calls;
    },
  };
}
const admin = (args) =>
  JSON.parse(
    execFileSync(process.execPath, [`${root}/dist/src/admin/admin.cli.js`, ...args, '--json'], {
      env: { ...process.env, DATABASE_URL: url, BENCH_UPSTREAM_KEY: 'k' },
      encoding: 'utf8',
    }),
  );

const maintenance = new pg.Client({ connectionString: server.href });
await maintenance.connect();
await maintenance.query(`CREATE DATABASE ${database}`);
try {
  execFileSync(process.execPath, [`${root}/dist/src/database/migrations.cli.js`, 'run'], {
    env: { ...process.env, DATABASE_URL: url },
    stdio: 'ignore',
  });
  admin(['orgs', 'create', '--slug', 'bench', '--name', 'Benchmark']);
  const key = admin([
    'keys',
    'create',
    '--org',
    'bench',
    '--name',
    'bench',
    '--scopes',
    'full_access',
  ]).secret;
  const upstreamUrl = `http://127.0.0.1:${BASE_PORT + 1}/v1`;
  const model = {
    provider: 'openai-compatible',
    baseUrl: upstreamUrl,
    model: MODEL,
    apiKeyEnv: 'BENCH_UPSTREAM_KEY',
    functionCalling: true,
  };
  const assistant = admin([
    'assistants',
    'create',
    '--org',
    'bench',
    '--name',
    'one-word',
    '--instructions',
    INSTRUCTIONS,
    '--model-json',
    JSON.stringify(model),
  ]).id;

  await start(
    'upstream',
    [`${root}/dist/bench/fake-upstream.js`],
    { BENCH_PORT: String(BASE_PORT + 1) },
    /on http/,
  );
  const routes = JSON.stringify({ [RELAY_ASSISTANT]: { model: MODEL, instructions: INSTRUCTIONS } });
  const relayEnv = {
    BENCH_PORT: String(BASE_PORT + 2),
    BENCH_UPSTREAM_URL: upstreamUrl,
    BENCH_RELAY_ASSISTANTS: routes,
    BENCH_RELAY_DATABASE_URL: url,
  };
  const floorEnv = { BENCH_PORT: String(BASE_PORT + 3), BENCH_UPSTREAM_URL: upstreamUrl, DATABASE_URL: url };
  const serviceEnv = {
    // As the bench runs the service (bench/bench.ts, serviceEnv).
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(BASE_PORT + 4),
    QUICKSTART: 'false',
    LOG_LEVEL: 'error',
    BENCH_UPSTREAM_KEY: 'k',
    MAX_IN_FLIGHT_RESPONSES: '100000',
    MAX_IN_FLIGHT_PER_ORGANIZATION: '100000',
    RATE_LIMIT_DEFAULT_PER_MINUTE: '0',
    DATABASE_URL: url,
    MIGRATIONS_RUN_ON_BOOT: 'false',
  };
  const arms = [
    {
      name: 'relay-pg',
      port: BASE_PORT + 2,
      application: 'bench-relay-pg',
      body: { model: `asst_${RELAY_ASSISTANT}` },
      child: await start('relay-pg', [`${root}/dist/bench/relay.js`], relayEnv, /on http/),
    },
    {
      name: 'stack floor',
      port: BASE_PORT + 3,
      application: 'bench-stack-floor',
      body: { model: 'floor' },
      child: await start('floor', [`${root}/bench/stack-floor.mjs`], floorEnv, /on http/),
    },
    {
      name: 'service',
      port: BASE_PORT + 4,
      application: 'switchboard',
      body: { model: assistant },
      child: await start('service', [`${root}/dist/src/main.js`], serviceEnv),
    },
  ];
  // BASE: one or more other builds (comma-separated), each a service arm of its own.
  for (const [index, other] of (process.env.BASE ? process.env.BASE.split(',') : []).entries()) {
    const name = index === 0 ? 'service (base)' : `service (${other.split('/').at(-1)})`;
    const application = `switchboard-other-${index}`;
    arms.push({
      name,
      port: BASE_PORT + 5 + index,
      application,
      body: { model: assistant },
      child: await start(name, [`${other}/dist/src/main.js`], {
        ...serviceEnv,
        PORT: String(BASE_PORT + 5 + index),
        DATABASE_URL: withApplication(url, application),
      }),
    });
  }
  for (const port of arms.filter((arm) => arm.name.startsWith('service')).map((arm) => arm.port)) {
    for (;;) {
      const ready = await globalThis.fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  const clients = Number(clientsArg);
  async function phase(arm, seconds) {
    const body = JSON.stringify({ ...arm.body, input: 'Hi', stream: false });
    const headers = {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'x-api-key': key,
    };
    const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
    let done = 0;
    let errors = 0;
    let stop = false;
    const turn = () =>
      new Promise((resolve) => {
        const request = http.request(
          { agent, host: '127.0.0.1', port: arm.port, path: '/v1/responses', method: 'POST', headers },
          (response) => {
            response.resume();
            response.on('end', () => (response.statusCode === 200 ? done++ : errors++, resolve()));
          },
        );
        request.on('error', () => (errors++, resolve()));
        request.end(body);
      });
    const loops = Array.from({ length: clients }, async () => {
      while (!stop) await turn();
    });
    await new Promise((resolve) => setTimeout(resolve, 2000)); // warm-up, not measured
    // Backends come and go with the pool (idle ones close): one that starts in the window counts
    // whole, one that ends in it is left out (its work there is at most an idle connection's).
    const backends = async () => {
      const { rows } = await maintenance.query(
        'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = $2',
        [database, arm.application],
      );
      const cpu = new Map();
      for (const { pid } of rows) {
        try {
          cpu.set(pid, cpuMs(pid));
        } catch {
          // ended meanwhile
        }
      }
      return cpu;
    };
    const tracer = process.env.STRACE ? straceCounts(arm.child.pid) : null;
    await tracer?.attached;
    const before = await backends();
    const pid = arm.child.pid;
    const [p0, m0, d0, t0] = [cpuMs(pid), cpuMs(pid, pid), done, Date.now()];
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    const [p1, m1, d1, t1] = [cpuMs(pid), cpuMs(pid, pid), done, Date.now()];
    const syscalls = await tracer?.stop();
    let backendsMs = 0;
    for (const [pid, cpu] of await backends()) backendsMs += cpu - (before.get(pid) ?? 0);
    stop = true;
    await Promise.all(loops);
    agent.destroy();
    const turns = d1 - d0;
    return {
      turnsPerSecond: (turns * 1000) / (t1 - t0),
      process: (p1 - p0) / turns,
      main: (m1 - m0) / turns,
      database: backendsMs / turns,
      errors,
      // strace's window is the measured one plus its attach and detach: per turn, roughly.
      syscalls: syscalls && [...syscalls].map(([name, calls]) => [name, calls / turns]),
    };
  }

  const results = Object.fromEntries(arms.map((arm) => [arm.name, []]));
  for (let round = 0; round < Number(roundsArg); round++) {
    for (const arm of round % 2 ? [...arms].reverse() : arms) {
      const result = await phase(arm, Number(secondsArg));
      results[arm.name].push(result);
      const f = (x) => x.toFixed(3);
      console.log(
        `${arm.name}: ${result.turnsPerSecond.toFixed(0)} turns/s, CPU ms/turn ${f(result.process + result.database)} (process ${f(result.process)}, main thread ${f(result.main)}, database ${f(result.database)}), errors ${result.errors}`,
      );
      if (result.syscalls) {
        const frequent = result.syscalls.filter(([, perTurn]) => perTurn >= 0.05).sort((a, b) => b[1] - a[1]);
        console.log(
          `  syscalls/turn: ${frequent.map(([name, perTurn]) => `${name} ${perTurn.toFixed(2)}`).join(', ')}`,
        );
      }
    }
  }
  const median = (values) => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)];
  const relay = median(results['relay-pg'].map((r) => r.process + r.database));
  for (const [name, runs] of Object.entries(results)) {
    const total = median(runs.map((r) => r.process + r.database));
    console.log(
      `median ${name}: ${median(runs.map((r) => r.turnsPerSecond)).toFixed(0)} turns/s, CPU ${total.toFixed(3)} ms/turn (${(total / relay).toFixed(2)}× relay-pg), process ${median(runs.map((r) => r.process)).toFixed(3)}, main thread ${median(runs.map((r) => r.main)).toFixed(3)}, database ${median(runs.map((r) => r.database)).toFixed(3)}`,
    );
  }
} finally {
  for (const child of children) child.kill();
  await new Promise((resolve) => setTimeout(resolve, 500));
  await maintenance.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await maintenance.end();
}
