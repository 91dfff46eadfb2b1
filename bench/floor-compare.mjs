// 32 clients of one-word JSON turns against relay-pg, the stack floor (bench/stack-floor.mjs) and the
// service, interleaved phases in one run, each on its own backends of one fresh PostgreSQL database
// (docs/benchmarks.md, round "floor"). CPU per turn = the server process + its backends (/proc).
// usage: [DATABASE_URL=<server>] [NODE=<node for the servers>] node bench/floor-compare.mjs <worktree> [seconds] [rounds] [clients]
// (after `npm run build && npx tsc -p bench/tsconfig.json` in <worktree>)
import { Buffer } from 'node:buffer';
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
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

const cpuMs = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
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
  for (;;) {
    const ready = await globalThis.fetch(`http://127.0.0.1:${BASE_PORT + 4}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
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
    const before = await backends();
    const [p0, d0, t0] = [cpuMs(arm.child.pid), done, Date.now()];
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    const [p1, d1, t1] = [cpuMs(arm.child.pid), done, Date.now()];
    let backendsMs = 0;
    for (const [pid, cpu] of await backends()) backendsMs += cpu - (before.get(pid) ?? 0);
    stop = true;
    await Promise.all(loops);
    agent.destroy();
    const turns = d1 - d0;
    return {
      turnsPerSecond: (turns * 1000) / (t1 - t0),
      process: (p1 - p0) / turns,
      database: backendsMs / turns,
      errors,
    };
  }

  const results = Object.fromEntries(arms.map((arm) => [arm.name, []]));
  for (let round = 0; round < Number(roundsArg); round++) {
    for (const arm of round % 2 ? [...arms].reverse() : arms) {
      const result = await phase(arm, Number(secondsArg));
      results[arm.name].push(result);
      const f = (x) => x.toFixed(3);
      console.log(
        `${arm.name}: ${result.turnsPerSecond.toFixed(0)} turns/s, CPU ms/turn ${f(result.process + result.database)} (process ${f(result.process)}, database ${f(result.database)}), errors ${result.errors}`,
      );
    }
  }
  const median = (values) => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)];
  const relay = median(results['relay-pg'].map((r) => r.process + r.database));
  for (const [name, runs] of Object.entries(results)) {
    const total = median(runs.map((r) => r.process + r.database));
    console.log(
      `median ${name}: ${median(runs.map((r) => r.turnsPerSecond)).toFixed(0)} turns/s, CPU ${total.toFixed(3)} ms/turn (${(total / relay).toFixed(2)}× relay-pg), process ${median(runs.map((r) => r.process)).toFixed(3)}, database ${median(runs.map((r) => r.database)).toFixed(3)}`,
    );
  }
} finally {
  for (const child of children) child.kill();
  await new Promise((resolve) => setTimeout(resolve, 500));
  await maintenance.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  await maintenance.end();
}
