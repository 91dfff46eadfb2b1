import http from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { execFileSync } from 'node:child_process';
import type { BenchDatabase } from './environment.js';
import {
  backgroundWorkload,
  compareFollowers,
  durableSettings,
  followOnce,
  REPLICA_APPLICATION,
} from './durable.js';
import { exchange, type ExchangeResult } from './http-client.js';
import {
  followUpBody,
  type FromLoadGenerator,
  type PhaseResult,
  type PhaseSpec,
  type Target,
  type Workload,
} from './load-protocol.js';
import type { BenchOptions } from './options.js';
import { ensurePeer, peerHeaders, type PeerInstall } from './peer.js';
import { DbActivitySampler, type ActivityWindow } from './db-activity.js';
import { measureTurns, type DatabaseProbe } from './db-probe.js';
import { PgCounter } from './pg-counter.js';
import { RELAY_APPLICATION } from './relay-store.js';
import {
  cpuMs,
  freePort,
  rssKiB,
  runMs,
  startNode,
  waitForHttp,
  waitForMessage,
  type Child,
} from './processes.js';
import { summarizeAllocations, summarizeProfile, type ProfileSummary } from './profile-summary.js';
import type {
  Arm,
  ArmResult,
  LoopStats,
  MemoryArm,
  MemoryResult,
  MemoryUsage,
  PoolStats,
  ProfileResult,
  ScenarioResult,
  ServerArm,
  SoakResult,
  StatementsResult,
  SweepStep,
} from './results.js';
import type { SeedRequest, SeedResult } from './seed.js';
import { openWalMeter, type WalMeter } from './wal-meter.js';
import { median, minus, summarize } from './stats.js';
import {
  BENCH_TOOL,
  TOOL_OUTPUT,
  profileModel,
  replyText,
  type UpstreamProfile,
} from './upstream-profile.js';

const DIST = resolve('dist');
const INSTRUCTIONS = 'You are the benchmark assistant. Answer briefly.';
const USER_CONTEXT_USER = 'bench-user-with-context';
const THREAD_LENGTHS = [1, 50, 200];

/** `replica`: the second service instance of resume-remote; `replicaDatabase`: its own backends. */
type Process =
  | 'service'
  | 'relay'
  | 'relayPg'
  | 'peer'
  | 'upstream'
  | 'loadgen'
  | 'database'
  | 'replica'
  | 'replicaDatabase'
  | 'relayPgDatabase';
const PROCESSES: readonly Process[] = [
  'service',
  'relay',
  'relayPg',
  'peer',
  'upstream',
  'loadgen',
  'database',
  'replica',
  'replicaDatabase',
  'relayPgDatabase',
];
const SERVER_ARMS: readonly ServerArm[] = ['relay', 'relayPg', 'peer', 'service'];
/** The arms that answer Responses requests: the bare relay, the persisting relay and the service. */
const RESPONSES_ARMS: readonly Arm[] = ['relay', 'relayPg', 'service'];
const UPSTREAM_KEY = 'bench-upstream-key';
interface CpuSnapshot {
  service: number | null;
  relay: number | null;
  relayPg: number | null;
  peer: number | null;
  upstream: number | null;
  loadgen: number | null;
  replica: number | null;
  /** Backend pid → CPU ms. */
  database: Map<number, number>;
  /** The backends of the second instance (resume-remote), by its application_name. */
  replicaDatabase: Map<number, number>;
  /** The persisting relay's backends, by its application_name (never counted as the service's). */
  relayPgDatabase: Map<number, number>;
}

interface ChatMessage {
  role: string;
  content: string | null;
}

/** A measured comparison: the same workload against each arm, interleaved in rounds. */
interface Comparison {
  key: string;
  title: string;
  setup: string;
  arms: Arm[];
  phase: Omit<PhaseSpec, 'id' | 'workload'>;
  workload(arm: Arm): Workload;
  /** A single exchange per arm before measuring; returns what is wrong, if anything. */
  check?(arm: Arm): Promise<string | undefined>;
  notes?: string[];
  /**
   * One more service workload measured in the same rounds, interleaved with the arms (the
   * `fallbacks` scenario: an assistant with fallbacks beside the same assistant without).
   */
  twin?: { label: string; workload: Workload };
}

interface Accumulated {
  results: PhaseResult[];
  loops: LoopStats[];
  activity: ActivityWindow[];
  cpu: Record<Process, number>;
  cpuKnown: Record<Process, boolean>;
}

export class Bench {
  private upstream?: Child;
  private relay?: Child;
  /** The persisting relay (relay-store.ts), when a PostgreSQL database is at hand. */
  private relayPg?: Child;
  private relayPgUrl = '';
  private relayPgPort = 0;
  private relayPgUnavailable: string | undefined;
  private peer?: Child;
  private service?: Child;
  /** resume-remote's second instance on the same database, while that scenario runs. */
  private replica?: Child;
  private replicaUrl = '';
  private loadgen?: Child;
  private upstreamUrl = '';
  private relayUrl = '';
  private peerUrl = '';
  private serviceUrl = '';
  private seeded?: SeedResult;
  private nextPhase = 1;
  private readonly waiting = new Map<
    number,
    {
      resolve(result: PhaseResult): void;
      onWindow(edge: 'start' | 'end'): void;
      onPlateau?(id: number, open: number): void;
    }
  >();
  private readonly agent = new http.Agent({ keepAlive: true, timeout: 4000 });
  private serviceUnavailable: string | undefined;
  /** Tips of the threads built through the relay and the service: `${arm}:${length}` → response id. */
  private readonly threadTips = new Map<string, string>();
  readonly notes: string[] = [];
  /** Arms left out of a scenario because their reply failed its check (`--strict` fails on these). */
  readonly excluded: string[] = [];
  private scenarioProfiles = 0;
  private memorySnapshots = 0;
  private generation = 0;
  private servicePort = 0;
  private relayPort = 0;
  private relayRoutes = '{}';
  private peerPort = 0;
  private peerInstall?: PeerInstall;
  /** pg_stat_activity sampled during measurement windows (PostgreSQL only). */
  private activity?: DbActivitySampler;
  private peerUnavailable: string | undefined;
  /** Node.js binary of the measured servers (--node), and its version. */
  private readonly nodePath: string;
  readonly serverNode: string;

  constructor(
    private readonly options: BenchOptions,
    private readonly database: BenchDatabase,
    private readonly resultsDir: string,
    /** Where the persisting relay keeps its turns: the bench database on PostgreSQL, else --relay-pg-url's. */
    private readonly relayDatabase: BenchDatabase | null,
  ) {
    this.nodePath = options.node ? resolve(options.node) : process.execPath;
    try {
      this.serverNode = execFileSync(this.nodePath, ['--version'], { encoding: 'utf8' }).trim();
    } catch (error) {
      throw new Error(
        `--node ${this.nodePath} does not run: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
  }

  get serviceAvailable(): boolean {
    return this.serviceUnavailable === undefined;
  }

  /** The peer gateway's versions and workaround, when it was measured. */
  get peerInfo(): { versions: Record<string, string>; patch: string } | null {
    return this.peerAvailable && this.peerInstall
      ? { versions: this.peerInstall.versions, patch: this.peerInstall.patch }
      : null;
  }

  private get peerAvailable(): boolean {
    return this.options.peer && this.peerUnavailable === undefined && this.peer !== undefined;
  }

  private available(arm: Arm): boolean {
    if (arm === 'service') return this.serviceAvailable;
    if (arm === 'peer') return this.peerAvailable;
    if (arm === 'relayPg') return this.relayPgAvailable;
    return true;
  }

  get relayPgAvailable(): boolean {
    return this.relayPgUnavailable === undefined && this.relayPg !== undefined;
  }

  private child(arm: ServerArm): Child | undefined {
    if (arm === 'relayPg') return this.relayPg;
    return arm === 'relay' ? this.relay : arm === 'peer' ? this.peer : this.service;
  }

  /** Node options that preload the event-loop monitor (see loop-monitor.ts). */
  private loopMonitor(): string[] {
    return ['--import', join(DIST, 'bench/loop-monitor.js')];
  }

  private logFile(name: string): string {
    return join(this.resultsDir, `${name}.log`);
  }

  private log(line: string): void {
    process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
  }

  // ---------------------------------------------------------------- processes

  private profiles(): Record<string, UpstreamProfile> {
    const o = this.options;
    const fast = { ttftMs: o.ttftMs, intervalMs: 0, toolCall: false };
    const profiles: Record<string, UpstreamProfile> = {
      'one-word': { ...fast, tokens: 1 },
      stream: { ...fast, tokens: o.tokens },
      paced: { ...fast, tokens: o.tokens, intervalMs: o.intervalMs },
      tool: { ...fast, tokens: 20, toolCall: true },
      thread: { ...fast, tokens: 20 },
      'user-context': { ...fast, tokens: 20 },
    };
    for (const interval of o.throughputIntervalsMs) {
      profiles[`paced-${interval}`] = { ...fast, tokens: o.tokens, intervalMs: interval };
    }
    for (const streams of o.slowStreams) {
      profiles[`slow-${streams}`] = {
        ttftMs: 200,
        // Longer than the slowest ramp allowed; the bench closes the streams once measured.
        tokens: Math.max(5, Math.ceil((this.slowRampMs(streams) + 30_000) / Math.max(1, o.slowIntervalMs))),
        intervalMs: o.slowIntervalMs,
        toolCall: false,
      };
    }
    return profiles;
  }

  /** The longest a hold waits for all its streams: the ramp at 100 streams/s, plus 10 s. */
  private slowRampMs(streams: number): number {
    return (streams / 100) * 1000 + 10_000;
  }

  private serviceEnv(port: number): Record<string, string> {
    return {
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(port),
      QUICKSTART: 'false',
      LOG_LEVEL: 'error',
      BENCH_UPSTREAM_KEY: 'bench-upstream-key',
      // The bench measures the service's own cost: admission limits must not shape the load.
      MAX_IN_FLIGHT_RESPONSES: '100000',
      MAX_IN_FLIGHT_PER_ORGANIZATION: '100000',
      RATE_LIMIT_DEFAULT_PER_MINUTE: '0',
      ...this.database.env,
    };
  }

  async start(): Promise<void> {
    this.upstream = startNode(
      'fake upstream',
      [join(DIST, 'bench/fake-upstream.js')],
      {},
      true,
      this.logFile('upstream'),
    );
    const upstreamReady = await waitForMessage<{ type: string; port: number }>(this.upstream, 'ready');
    this.upstreamUrl = `http://127.0.0.1:${upstreamReady.port}`;
    this.log(`fake upstream on ${this.upstreamUrl}`);

    this.servicePort = await freePort();
    await this.startService();

    const profiles = this.profiles();
    const seedRequest: SeedRequest = {
      organization: 'bench',
      upstreamBaseUrl: `${this.upstreamUrl}/v1`,
      instructions: INSTRUCTIONS,
      assistants: Object.fromEntries(
        Object.entries(profiles).map(([name, profile]) => [name, profileModel(profile)]),
      ),
      withFallbacks: ['one-word', 'stream'],
      memory: {
        assistant: 'user-context',
        userId: USER_CONTEXT_USER,
        items: Array.from(
          { length: 50 },
          (_, index) =>
            `Memory ${index + 1}: the user prefers concise answers about topic ${index + 1}, works in logistics and uses metric units.`,
        ),
      },
    };
    const seeder = startNode(
      'seed',
      [join(DIST, 'bench/seed.js')],
      { ...this.serviceEnv(0), BENCH_SEED: JSON.stringify(seedRequest) },
      true,
      this.logFile('seed'),
      this.nodePath,
    );
    const seeded = await Promise.race([
      waitForMessage<{ type: string; result: SeedResult }>(seeder, 'seeded', 180_000),
      waitForMessage<{ type: string; message: string }>(seeder, 'seed-failed', 180_000).then((failure) => {
        throw new Error(`seeding failed: ${failure.message}`);
      }),
    ]);
    await seeder.stop();
    this.seeded = seeded.result;
    if (this.seeded.memoryError)
      this.notes.push(`Memory items could not be created: ${this.seeded.memoryError}`);
    this.log(
      `seeded ${Object.keys(this.seeded.assistants).length} assistants, ${this.seeded.memoryItems} memory items`,
    );

    const routes = Object.fromEntries(
      Object.entries(this.seeded.assistants).map(([name, id]) => [
        id,
        { model: profileModel(profiles[name.replace(/\+fallbacks$/, '')]), instructions: INSTRUCTIONS },
      ]),
    );
    this.relayRoutes = JSON.stringify(routes);
    await this.startRelay();
    const servers = [this.database, this.relayDatabase].filter((db) => db?.server);
    if (servers.length > 0) {
      this.activity = await DbActivitySampler.open(
        servers[0]!.server!.url,
        [...new Set(servers.map((db) => db!.server!.database))],
        RELAY_APPLICATION,
      ).catch(() => undefined);
    }
    await this.startAndCheckRelayPg();

    this.loadgen = startNode(
      'load generator',
      [join(DIST, 'bench/load-generator.js')],
      {},
      true,
      this.logFile('load-generator'),
    );
    this.loadgen.process.on('message', (message: FromLoadGenerator) => this.onLoadMessage(message));
    await waitForMessage(this.loadgen, 'ready');
    await this.startAndCheckPeer();

    const probe = await this.once(
      'service',
      this.turnWorkload('service', 'one-word', { input: 'Hi', stream: false }),
    );
    if (!probe.ok) {
      this.serviceUnavailable = `POST /v1/responses failed (${probe.error})`;
      this.notes.push(`The service was not measured: ${this.serviceUnavailable}.`);
      this.log(`service arm unavailable: ${this.serviceUnavailable}`);
    }
  }

  /** `node dist/src/main.js` on the bench database; profiled with --profile-scenarios. */
  private async startService(): Promise<void> {
    const profiled = this.options.profileScenarios;
    this.generation++;
    this.scenarioProfiles = 0;
    this.memorySnapshots = 0;
    this.service = startNode(
      'service',
      [
        ...this.options.serviceNodeArgs,
        ...(profiled ? ['--expose-gc', '--import', join(DIST, 'bench/cpu-profiler.js')] : []),
        ...this.loopMonitor(),
        join(DIST, 'src/main.js'),
      ],
      {
        ...this.serviceEnv(this.servicePort),
        ...(profiled ? { BENCH_CPU_PROFILE: this.scenarioPrefix() } : {}),
      },
      true,
      this.logFile('service'),
      this.nodePath,
    );
    this.serviceUrl = `http://127.0.0.1:${this.servicePort}`;
    await waitForHttp(`${this.serviceUrl}/readyz`, this.service);
    this.log(`service on ${this.serviceUrl} (${this.database.kind} database)`);
  }

  private async startRelay(): Promise<void> {
    this.relay = startNode(
      'relay',
      [...this.loopMonitor(), join(DIST, 'bench/relay.js')],
      {
        BENCH_UPSTREAM_URL: `${this.upstreamUrl}/v1`,
        BENCH_RELAY_ASSISTANTS: this.relayRoutes,
        BENCH_PORT: String(this.relayPort),
      },
      true,
      this.logFile('relay'),
      this.nodePath,
    );
    const relayReady = await waitForMessage<{ type: string; port: number }>(this.relay, 'ready');
    this.relayPort = relayReady.port;
    this.relayUrl = `http://127.0.0.1:${relayReady.port}`;
    this.log(`bare relay on ${this.relayUrl}`);
  }

  /** The bare relay with a store (relay-store.ts): one prepared INSERT per turn, own backends. */
  private async startRelayPg(): Promise<void> {
    const address = await this.relayDatabase!.address();
    this.relayPg = startNode(
      'relay-pg',
      [...this.loopMonitor(), join(DIST, 'bench/relay.js')],
      {
        BENCH_UPSTREAM_URL: `${this.upstreamUrl}/v1`,
        BENCH_RELAY_ASSISTANTS: this.relayRoutes,
        BENCH_PORT: String(this.relayPgPort),
        BENCH_RELAY_DATABASE_URL: address.url,
        // The service's pool size (DATABASE_POOL_MAX, default 20), for a like-for-like pool.
        BENCH_RELAY_POOL_MAX: process.env.DATABASE_POOL_MAX ?? '20',
      },
      true,
      this.logFile('relay-pg'),
      this.nodePath,
    );
    const ready = await waitForMessage<{ type: string; port: number }>(this.relayPg, 'ready');
    this.relayPgPort = ready.port;
    this.relayPgUrl = `http://127.0.0.1:${ready.port}`;
    this.log(`persisting relay on ${this.relayPgUrl} (${this.relayDatabase!.kind} database)`);
  }

  /** Starts the persisting relay when there is a PostgreSQL database for it; on failure, says why. */
  private async startAndCheckRelayPg(): Promise<void> {
    if (!this.relayDatabase || this.relayDatabase.kind !== 'postgresql') {
      this.relayPgUnavailable =
        'it needs a PostgreSQL server (DATABASE_URL, or --relay-pg-url with the embedded database)';
      this.notes.push(`The persisting relay was not measured: ${this.relayPgUnavailable}.`);
      return;
    }
    try {
      await this.startRelayPg();
      for (const stream of [false, true]) {
        const probe = await this.once(
          'relayPg',
          this.turnWorkload('relayPg', stream ? 'stream' : 'one-word', { input: 'Hi', stream }),
        );
        if (!probe.ok) throw new Error(`a ${stream ? 'streamed' : 'JSON'} turn failed (${probe.error})`);
      }
    } catch (error) {
      this.relayPgUnavailable = error instanceof Error ? error.message : String(error);
      this.notes.push(`The persisting relay was not measured: ${this.relayPgUnavailable}.`);
      this.log(`relay-pg arm unavailable: ${this.relayPgUnavailable}`);
      await this.relayPg?.stop();
      this.relayPg = undefined;
    }
  }

  /**
   * The peer gateway (bench/peer.ts), installed on first use, on the same Node as the service.
   * `--headless` leaves out its web UI and log streaming; NODE_ENV=production as for the service.
   */
  private async startPeer(): Promise<void> {
    this.peerInstall ??= await ensurePeer((line) => this.log(line));
    if (this.peerPort === 0) this.peerPort = await freePort();
    this.peer = startNode(
      'peer',
      [...this.loopMonitor(), this.peerInstall.entry, `--port=${this.peerPort}`, '--headless'],
      { NODE_ENV: 'production' },
      true,
      this.logFile('peer'),
      this.nodePath,
    );
    this.peerUrl = `http://127.0.0.1:${this.peerPort}`;
    await waitForHttp(`${this.peerUrl}/`, this.peer);
    this.log(
      `peer gateway (${this.peerInstall.versions[Object.keys(this.peerInstall.versions)[0]]}) on ${this.peerUrl}`,
    );
  }

  /** Starts the peer and checks one JSON and one streamed turn through it; on failure, says why. */
  private async startAndCheckPeer(): Promise<void> {
    if (!this.options.peer) return;
    try {
      await this.startPeer();
    } catch (error) {
      this.peerUnavailable = `it did not start (${error instanceof Error ? error.message : String(error)})`;
    }
    if (this.peerUnavailable === undefined) {
      for (const stream of [false, true]) {
        const probe = await this.once(
          'peer',
          this.turnWorkload('peer', stream ? 'stream' : 'one-word', { input: 'Hi', stream }),
        );
        if (!probe.ok) {
          this.peerUnavailable = `a ${stream ? 'streamed' : 'JSON'} turn failed (${probe.error})`;
          break;
        }
      }
    }
    if (this.peerUnavailable !== undefined) {
      this.notes.push(`The peer gateway was not measured: ${this.peerUnavailable}.`);
      this.log(`peer arm unavailable: ${this.peerUnavailable}`);
      await this.peer?.stop();
      this.peer = undefined;
    }
  }

  /**
   * Fresh service and relay processes on the same ports and database, warmed with a few turns,
   * so memory figures start from a process without the slack earlier scenarios left in its heap.
   */
  private async restartServers(): Promise<void> {
    const peer = this.peerAvailable;
    const relayPg = this.relayPgAvailable;
    await Promise.all([this.service?.stop(), this.relay?.stop(), this.relayPg?.stop(), this.peer?.stop()]);
    await Promise.all([
      this.startService(),
      this.startRelay(),
      relayPg ? this.startRelayPg() : undefined,
      peer ? this.startPeer() : undefined,
    ]);
    for (const arm of SERVER_ARMS.filter((candidate) => this.available(candidate))) {
      for (let turn = 0; turn < 20; turn++) {
        await this.once(arm, this.turnWorkload(arm, 'one-word', { input: 'Warm up.', stream: true }));
      }
    }
  }

  private scenarioPrefix(): string {
    return join(this.resultsDir, `service-${this.generation}-scenario`);
  }

  async stop(): Promise<void> {
    this.loadgen?.process.send?.({ type: 'exit' });
    await this.activity?.close();
    this.agent.destroy();
    // The replica first: on the embedded database it reads through the service's server.
    await this.replica?.stop();
    const children = [this.loadgen, this.relay, this.relayPg, this.peer, this.service, this.upstream].filter(
      (child) => child !== undefined,
    );
    await Promise.all(children.map((child) => child.stop()));
  }

  // ---------------------------------------------------------------- load generator plumbing

  private onLoadMessage(message: FromLoadGenerator): void {
    if (message.type === 'ready') return;
    const waiter = this.waiting.get(message.id);
    if (!waiter) return;
    if (message.type === 'window') waiter.onWindow(message.edge);
    else if (message.type === 'plateau') waiter.onPlateau?.(message.id, message.open);
    else {
      this.waiting.delete(message.id);
      waiter.resolve(message.result);
    }
  }

  /**
   * CPU times now; the database's backends are looked up (they come and go with the pool). A
   * backend's time comes from schedstat (nanoseconds): it runs in bursts far shorter than the
   * 10-ms ticks /proc/<pid>/stat is sampled in, which read as 0 for a backend with few turns.
   */
  private async snapshot(): Promise<CpuSnapshot> {
    const read = (child: Child | undefined) => (child ? cpuMs(child.pid) : null);
    const processes = {
      service: read(this.service),
      relay: read(this.relay),
      relayPg: read(this.relayPg),
      peer: read(this.peer),
      upstream: read(this.upstream),
      loadgen: read(this.loadgen),
      replica: read(this.replica),
    };
    const database = new Map<number, number>();
    const replicaDatabase = new Map<number, number>();
    const relayPgDatabase = new Map<number, number>();
    const relayPgPids =
      this.relayPg && this.relayDatabase?.kind === 'postgresql'
        ? this.relayDatabase.backendPids(RELAY_APPLICATION)
        : Promise.resolve([]);
    for (const pid of await relayPgPids) {
      const value = runMs(pid);
      if (value !== null) relayPgDatabase.set(pid, value);
    }
    if (this.database.kind === 'postgresql') {
      const [all, replica] = await Promise.all([
        this.database.backendPids(),
        this.replica ? this.database.backendPids(REPLICA_APPLICATION) : Promise.resolve([]),
      ]);
      for (const pid of all) {
        const value = runMs(pid);
        // The persisting relay's backends share the bench database: they are not the service's.
        if (value !== null && !relayPgDatabase.has(pid)) database.set(pid, value);
      }
      for (const pid of replica) {
        const value = database.get(pid);
        if (value !== undefined) replicaDatabase.set(pid, value);
      }
    }
    return { ...processes, database, replicaDatabase, relayPgDatabase };
  }

  private async runPhase(
    spec: Omit<PhaseSpec, 'id'>,
    onPlateau?: (id: number, open: number) => void,
  ): Promise<{
    result: PhaseResult;
    cpu: Partial<Record<Process, number>>;
    loop: Partial<Record<ServerArm, LoopStats | null>>;
    activity: ActivityWindow | undefined;
  }> {
    const id = this.nextPhase++;
    let start: Promise<CpuSnapshot> | undefined;
    let end: Promise<CpuSnapshot> | undefined;
    let loop: Promise<Partial<Record<ServerArm, LoopStats | null>>> | undefined;
    let activity: ActivityWindow | undefined;
    const result = await new Promise<PhaseResult>((resolvePhase) => {
      this.waiting.set(id, {
        resolve: resolvePhase,
        onWindow: (edge) => {
          if (edge === 'start') {
            start = this.snapshot();
            void this.loopWindow('start');
            this.activity?.start();
          } else {
            activity = this.activity?.stop();
            end = this.snapshot();
            loop = this.loopWindow('end');
          }
        },
        onPlateau,
      });
      this.loadgen!.process.send({ type: 'phase', spec: { ...spec, id } });
    });
    const cpu: Partial<Record<Process, number>> = {};
    if (start && end) {
      const [before, after] = await Promise.all([start, end]);
      for (const key of ['service', 'relay', 'relayPg', 'peer', 'upstream', 'loadgen', 'replica'] as const) {
        const a = before[key];
        const b = after[key];
        if (a !== null && b !== null) cpu[key] = b - a;
      }
      if (this.database.kind === 'postgresql') {
        // A backend opened inside the window counts from zero: its start-up is part of the load.
        let total = 0;
        for (const [pid, value] of after.database) total += value - (before.database.get(pid) ?? 0);
        cpu.database = total;
        let replica = 0;
        for (const [pid, value] of after.replicaDatabase) replica += value - (before.database.get(pid) ?? 0);
        cpu.replicaDatabase = replica;
      }
      if (after.relayPgDatabase.size > 0 || before.relayPgDatabase.size > 0) {
        let relayPg = 0;
        for (const [pid, value] of after.relayPgDatabase)
          relayPg += value - (before.relayPgDatabase.get(pid) ?? 0);
        cpu.relayPgDatabase = relayPg;
      }
    }
    return { result, cpu, loop: (await loop) ?? {}, activity };
  }

  /**
   * Starts or ends an event-loop window in every running server (loop-monitor.ts); at the end,
   * resolves with each one's figures (null if it did not answer).
   */
  private async loopWindow(edge: 'start' | 'end'): Promise<Partial<Record<ServerArm, LoopStats | null>>> {
    const stats: Partial<Record<ServerArm, LoopStats | null>> = {};
    await Promise.all(
      SERVER_ARMS.map(async (arm) => {
        const child = this.child(arm);
        if (!child?.process.connected) return;
        const answer =
          edge === 'end'
            ? waitForMessage<{ type: string; stats: LoopStats }>(child, 'bench-loop-stats', 5000)
            : undefined;
        // A server that exits meanwhile simply gives no figures.
        child.process.send({ type: 'bench-loop', edge }, () => undefined);
        if (answer) stats[arm] = await answer.then((message) => message.stats).catch(() => null);
      }),
    );
    return stats;
  }

  // ---------------------------------------------------------------- workloads

  private target(arm: Arm): Target {
    if (arm === 'upstream') {
      return {
        baseUrl: this.upstreamUrl,
        path: '/v1/chat/completions',
        headers: { authorization: `Bearer ${UPSTREAM_KEY}` },
        protocol: 'chat',
      };
    }
    if (arm === 'peer') {
      // The peer relays Chat Completions (it keeps no threads), so it gets the direct arm's bodies.
      return {
        baseUrl: this.peerUrl,
        path: '/v1/chat/completions',
        headers: peerHeaders(`${this.upstreamUrl}/v1`, UPSTREAM_KEY),
        protocol: 'chat',
      };
    }
    return {
      baseUrl: arm === 'relay' ? this.relayUrl : arm === 'relayPg' ? this.relayPgUrl : this.serviceUrl,
      path: '/v1/responses',
      headers: { 'x-api-key': this.seeded!.apiKey },
      protocol: 'responses',
    };
  }

  private assistant(name: string): string {
    const id = this.seeded!.assistants[name];
    if (!id) throw new Error(`no assistant ${name}`);
    return id;
  }

  /** One turn's request for an arm: a Responses body, or the Chat Completions body it becomes. */
  private turnWorkload(
    arm: Arm,
    assistant: string,
    turn: {
      input: string;
      stream: boolean;
      tools?: boolean;
      previous?: string;
      history?: ChatMessage[];
      headers?: Record<string, string>;
      kind?: 'single' | 'function-call';
    },
  ): Workload {
    // `<name>+fallbacks`: the same profile through the assistant seeded with fallbacks.
    const profile = this.profiles()[assistant.replace(/\+fallbacks$/, '')];
    const target = this.target(arm);
    if (turn.headers) target.headers = { ...target.headers, ...turn.headers };
    let body: unknown;
    if (arm === 'upstream' || arm === 'peer') {
      body = {
        model: profileModel(profile),
        messages: [
          { role: 'system', content: INSTRUCTIONS },
          ...(turn.history ?? []),
          { role: 'user', content: turn.input },
        ],
        stream: turn.stream,
        ...(turn.stream ? { stream_options: { include_usage: true } } : {}),
        ...(turn.tools
          ? {
              tools: [
                { type: 'function', function: { ...BENCH_TOOL, parameters: { ...BENCH_TOOL.parameters } } },
              ],
            }
          : {}),
      };
    } else {
      body = {
        model: this.assistant(assistant),
        input: turn.input,
        stream: turn.stream,
        ...(turn.previous ? { previous_response_id: turn.previous } : {}),
        ...(turn.tools ? { tools: [{ type: 'function', ...BENCH_TOOL }] } : {}),
      };
    }
    const expectTokens = turn.stream ? profile.tokens : 1;
    if (turn.kind === 'function-call') {
      return {
        kind: 'function-call',
        target,
        body,
        stream: turn.stream,
        expectTokens,
        toolOutput: TOOL_OUTPUT,
      };
    }
    return { kind: 'single', target, body, stream: turn.stream, expectTokens };
  }

  /** One exchange from this process, keeping the text: checks and thread building. */
  private async once(arm: Arm, workload: Workload): Promise<ExchangeResult> {
    if (workload.kind === 'background') {
      const { created, followers } = await followOnce(this.agent, workload);
      return followers[0] ?? created;
    }
    const call = (body: unknown) =>
      exchange({
        agent: this.agent,
        baseUrl: workload.target.baseUrl,
        path: workload.target.path,
        headers: workload.target.headers,
        body: JSON.stringify(body),
        protocol: workload.target.protocol,
        stream: workload.stream,
        timeoutMs: 30_000,
        collectText: true,
      });
    const first = await call(workload.body);
    if (workload.kind === 'single' || !first.ok) return first;
    const next = followUpBody(workload, first);
    return typeof next === 'string' ? { ...first, ok: false, error: next } : call(next);
  }

  /** Checks a reply is complete and says what the fake model said, with the events a client expects. */
  private async checkReply(arm: Arm, workload: Workload, tokens: number): Promise<string | undefined> {
    const result = await this.once(arm, workload);
    if (!result.ok) return result.error ?? 'failed';
    const expected = replyText(tokens);
    if (result.text !== expected) return `reply text differs (${JSON.stringify(result.text?.slice(0, 40))}…)`;
    if (workload.stream && workload.target.protocol === 'responses') {
      const events = result.events ?? [];
      if (events[0] !== 'response.created') return `first event was ${events[0]}`;
      if (!events.includes('response.completed')) return 'no response.completed';
    }
    return undefined;
  }

  private async upstreamLast(): Promise<{ messages: number; systemChars: number; bytes: number }> {
    const res = await fetch(`${this.upstreamUrl}/last`);
    return (await res.json()) as { messages: number; systemChars: number; bytes: number };
  }

  // ---------------------------------------------------------------- comparisons

  private async comparison(definition: Comparison): Promise<ScenarioResult> {
    const notes: string[] = [];
    let arms = definition.arms.filter((arm) => this.available(arm));
    if (!this.serviceAvailable && definition.arms.includes('service')) {
      notes.push(`service not measured: ${this.serviceUnavailable}`);
    }
    if (definition.check) {
      for (const arm of [...arms]) {
        const problem = await definition.check(arm);
        if (!problem) continue;
        if (arm !== 'service' && arm !== 'peer' && arm !== 'relayPg')
          throw new Error(`${definition.key}: the ${arm} baseline failed its check: ${problem}`);
        notes.push(`${arm} excluded: its reply failed the check (${problem})`);
        this.excluded.push(`${definition.key}: ${arm} (${problem})`);
        arms = arms.filter((candidate) => candidate !== arm);
      }
    }
    this.log(`${definition.title} [${arms.join(', ')}]`);
    const accumulated = new Map<Arm, Accumulated>();
    const twinned = new Map<Arm, Accumulated>();
    const twin = definition.twin && arms.includes('service') ? definition.twin : undefined;
    const slots: (Arm | 'twin')[] = twin ? [...arms, 'twin'] : arms;
    const profiles: ProfileResult[] = [];
    for (let round = 0; round < this.options.rounds; round++) {
      const order = slots.map((_, index) => slots[(index + round) % slots.length]);
      for (const slot of order) {
        const arm = slot === 'twin' ? 'service' : slot;
        const warmupMs = round === 0 ? definition.phase.warmupMs : Math.min(definition.phase.warmupMs, 1000);
        const durationMs = definition.phase.durationMs - definition.phase.warmupMs + warmupMs;
        const profiling = slot === 'service' && round === 0 && this.options.profileScenarios;
        if (profiling) this.service!.process.kill('SIGUSR2');
        const { result, cpu, loop, activity } = await this.runPhase({
          ...definition.phase,
          warmupMs,
          durationMs,
          workload: twin && slot === 'twin' ? twin.workload : definition.workload(arm),
        });
        if (profiling)
          profiles.push(...(await this.stopScenarioProfile(definition.title, result.turnsInWindow)));
        const into = slot === 'twin' ? twinned : accumulated;
        accumulate(into, arm, result, cpu, arm === 'upstream' ? undefined : loop[arm], activity);
      }
    }
    const scenario: ScenarioResult = {
      key: definition.key,
      title: definition.title,
      setup: definition.setup,
      arms: {},
      // Read now: checks may have added notes about what they saw.
      notes: [...(definition.notes ?? []), ...notes],
      added: {
        ttftP50: null,
        ttftP99: null,
        totalP50: null,
        totalP99: null,
        gapP99: null,
        stalls: null,
        cpuMsPerTurn: null,
      },
      ...(profiles.length > 0 ? { profile: profiles[0] } : {}),
    };
    for (const [arm, entry] of accumulated) scenario.arms[arm] = armResult(arm, entry);
    const service = scenario.arms.service;
    const relay = scenario.arms.relay;
    const twinEntry = twinned.get('service');
    if (twin && twinEntry && service) {
      scenario.twin = { label: twin.label, arm: armResult('service', twinEntry) };
      scenario.notes.push(twinNote(twin.label, service, scenario.twin.arm));
      this.log(`  ${scenario.notes[scenario.notes.length - 1]}`);
    }
    if (service && relay) {
      scenario.added = {
        ttftP50: minus(service.ttft?.p50, relay.ttft?.p50),
        ttftP99: minus(service.ttft?.p99, relay.ttft?.p99),
        totalP50: minus(service.total?.p50, relay.total?.p50),
        totalP99: minus(service.total?.p99, relay.total?.p99),
        gapP99: minus(service.gap?.p99, relay.gap?.p99),
        stalls: service.stalls - relay.stalls,
        cpuMsPerTurn: minus(service.cpuMsPerTurn, relay.cpuMsPerTurn),
      };
    }
    const describe = (arm: Arm) => {
      const result = scenario.arms[arm];
      if (!result) return `${arm} -`;
      return `${arm} ttft p50 ${fmt(result.ttft?.p50)} total p50 ${fmt(result.total?.p50)} p99 ${fmt(result.total?.p99)} errors ${Object.values(result.errors).reduce((a, b) => a + b, 0)}`;
    };
    this.log(`  ${arms.map(describe).join(' | ')}`);
    for (const arm of arms) {
      const loop = scenario.arms[arm]?.loop;
      if (loop)
        this.log(
          `  ${arm} event loop: busy ${(loop.utilization * 100).toFixed(0)}%, delay p50 ${fmt(loop.delayP50Ms)} p99 ${fmt(loop.delayP99Ms)} ms${loop.pool ? `; pool: ${loop.pool.waited}/${loop.pool.acquisitions} acquisitions queued, wait p50 ${fmt(loop.pool.waitP50Ms)} p99 ${fmt(loop.pool.waitP99Ms)} max ${fmt(loop.pool.waitMaxMs)} ms, ${loop.pool.maxWaiting} queued at most, ${loop.pool.maxOpen} open` : ''}`,
        );
    }
    return scenario;
  }

  /** Stops the measured service's profilers and reads what they wrote. */
  private async stopScenarioProfile(label: string, turns: number): Promise<ProfileResult[]> {
    this.service!.process.kill('SIGUSR2');
    const summary = await readProfiles(`${this.scenarioPrefix()}.${++this.scenarioProfiles}`, turns);
    return summary ? [{ label, summary }] : [];
  }

  private seconds(base: number): number {
    return Math.round(base * 1000 * this.options.scale);
  }

  private closedPhase(concurrency: number, durationS: number, warmupS: number, stallFloorMs: number) {
    // A quick run trades JIT warm-up for time; its figures are marked indicative.
    if (this.options.quick) warmupS = Math.min(warmupS, 1);
    return {
      mode: 'closed' as const,
      concurrency,
      rate: 0,
      durationMs: this.seconds(durationS) + Math.round(warmupS * 1000),
      warmupMs: Math.round(warmupS * 1000),
      rampMs: 0,
      timeoutMs: 60_000,
      maxOutstanding: 0,
      stallMs: stallFloorMs + this.options.stallMs,
    };
  }

  async scenarios(): Promise<ScenarioResult[]> {
    const o = this.options;
    const want = (key: string) => o.only.length === 0 || o.only.includes(key);
    const all: Arm[] = ['upstream', 'relay', 'relayPg', 'peer', 'service'];
    const results: ScenarioResult[] = [];
    const textCheck = (assistant: string, stream: boolean, tokens: number) => (arm: Arm) =>
      this.checkReply(arm, this.turnWorkload(arm, assistant, { input: 'Hello', stream }), tokens);

    if (want('one-word')) {
      results.push(
        await this.comparison({
          key: 'one-word',
          title: 'One-word reply, not streamed',
          setup: `1 client back to back; JSON body; fake model answers one token after ${o.ttftMs} ms`,
          arms: all,
          phase: this.closedPhase(1, 4, 1.5, 0),
          workload: (arm) => this.turnWorkload(arm, 'one-word', { input: 'Say one word.', stream: false }),
          check: textCheck('one-word', false, 1),
        }),
      );
    }
    if (want('one-word-concurrent')) {
      results.push(
        await this.comparison({
          key: 'one-word-concurrent',
          title: `One-word replies, ${o.clients} clients at once`,
          setup: `${o.clients} clients back to back; JSON body; fake model answers one token after ${o.ttftMs} ms (new turns per second at full load)`,
          arms: all,
          phase: this.closedPhase(o.clients, 4, 1.5, 0),
          workload: (arm) => this.turnWorkload(arm, 'one-word', { input: 'Say one word.', stream: false }),
          check: textCheck('one-word', false, 1),
        }),
      );
    }
    if (want('stream-1')) {
      results.push(
        await this.comparison({
          key: 'stream-1',
          title: `Streamed ${o.tokens}-token reply, one request at a time`,
          setup: `1 client back to back; first token after ${o.ttftMs} ms, then all ${o.tokens} tokens as fast as they go`,
          arms: all,
          phase: this.closedPhase(1, 6, 1.5, 0),
          workload: (arm) => this.turnWorkload(arm, 'stream', { input: 'Tell me a story.', stream: true }),
          check: textCheck('stream', true, o.tokens),
        }),
      );
    }
    if (want('stream-concurrent')) {
      const streamMs = o.ttftMs + o.tokens * o.intervalMs;
      results.push(
        await this.comparison({
          key: 'stream-concurrent',
          title: `${o.concurrency} concurrent streamed ${o.tokens}-token replies`,
          setup: `${o.concurrency} clients back to back (starts spread over one stream); first token after ${o.ttftMs} ms, then one token every ${o.intervalMs} ms (${Math.round((o.concurrency * 1000) / Math.max(0.1, o.intervalMs))} tokens/s offered)`,
          arms: all,
          phase: {
            ...this.closedPhase(o.concurrency, 8, Math.min(4, 1 + streamMs / 1000), o.intervalMs),
            rampMs: Math.min(streamMs, 3000),
          },
          workload: (arm) => this.turnWorkload(arm, 'paced', { input: 'Tell me a story.', stream: true }),
          check: textCheck('paced', true, o.tokens),
        }),
      );
    }
    if (want('throughput')) {
      for (const interval of o.throughputIntervalsMs) {
        const streamMs = o.ttftMs + o.tokens * interval;
        results.push(
          await this.comparison({
            key: `throughput-${interval}`,
            title: `Relayed tokens: ${o.concurrency} streams at one token per ${interval} ms`,
            setup: `${o.concurrency} clients back to back; ${Math.round((o.concurrency * 1000) / Math.max(0.1, interval))} tokens/s offered`,
            arms: ['relay', 'relayPg', 'peer', 'service'],
            phase: {
              ...this.closedPhase(o.concurrency, 6, Math.min(4, 1 + streamMs / 1000), interval),
              rampMs: Math.min(streamMs, 3000),
            },
            workload: (arm) =>
              this.turnWorkload(arm, `paced-${interval}`, { input: 'Tell me a story.', stream: true }),
          }),
        );
      }
    }
    if (want('function-call')) {
      results.push(
        await this.comparison({
          key: 'function-call',
          title: 'Function-call round trip',
          setup:
            'the model calls get_weather (requires_action), the client posts function_call_output with previous_response_id, the model answers in 20 tokens; streamed; 1 client',
          arms: all,
          phase: this.closedPhase(1, 5, 1.5, 0),
          workload: (arm) =>
            this.turnWorkload(arm, 'tool', {
              input: 'What is the weather in Paris?',
              stream: true,
              tools: true,
              kind: 'function-call',
            }),
          check: (arm) =>
            this.checkReply(
              arm,
              this.turnWorkload(arm, 'tool', {
                input: 'Weather?',
                stream: true,
                tools: true,
                kind: 'function-call',
              }),
              20,
            ),
          notes: [
            "Latency is the whole round trip (both requests); time to first token is the follow-up's, from its own start.",
          ],
        }),
      );
    }
    if (want('threads')) {
      await this.buildThreads();
      for (const length of THREAD_LENGTHS) {
        results.push(
          await this.comparison({
            key: `thread-${length}`,
            title: `Continuing a thread of ${length} turn${length === 1 ? '' : 's'}`,
            setup: `previous_response_id = the tip of a ${length}-turn thread (each request branches from it); streamed 20-token reply; 1 client`,
            arms: all,
            phase: this.closedPhase(1, 3.5, 1, 0),
            workload: (arm) => this.threadWorkload(arm, length),
            check: async (arm) => {
              const problem = await this.checkReply(arm, this.threadWorkload(arm, length), 20);
              if (problem) return problem;
              const last = await this.upstreamLast();
              const expected = 2 * length + 2;
              return last.messages === expected
                ? undefined
                : `the model saw ${last.messages} messages, expected ${expected}`;
            },
          }),
        );
      }
    }
    if (want('fallbacks')) {
      // The same one-word JSON turn and streamed reply through an assistant with two fallback
      // targets and continuation, interleaved with the plain assistant (docs/resilience.md).
      for (const stream of [false, true]) {
        const assistant = stream ? 'stream' : 'one-word';
        const turn = { input: stream ? 'Tell me a story.' : 'Say one word.', stream };
        results.push(
          await this.comparison({
            key: stream ? 'fallbacks-stream' : 'fallbacks',
            title: `${stream ? `Streamed ${o.tokens}-token reply` : 'One-word reply, not streamed'}: an assistant with fallbacks beside one without`,
            setup: `1 client back to back; the service's arm is the plain assistant, its twin the same model with 2 fallback targets and continuation (never called: the primary is healthy)`,
            arms: ['relay', 'service'],
            phase: this.closedPhase(1, 4, 1.5, 0),
            workload: (arm) => this.turnWorkload(arm, assistant, turn),
            twin: {
              label: 'with fallbacks',
              workload: this.turnWorkload('service', `${assistant}+fallbacks`, turn),
            },
          }),
        );
      }
    }
    if (want('user-context')) {
      const claims = await this.createClaims();
      const notes = [claims];
      results.push(
        await this.comparison({
          key: 'user-context',
          title: 'A turn with 20 claims and 50 memory items',
          setup: `x-user-id of a user with 20 claims (POST /v1/user-claims/bulk) and ${this.seeded?.memoryItems ?? 0} memory items; streamed 20-token reply; 1 client`,
          arms: all,
          phase: this.closedPhase(1, 4, 1.5, 0),
          workload: (arm) => this.userContextWorkload(arm),
          check: async (arm) => {
            const problem = await this.checkReply(arm, this.userContextWorkload(arm), 20);
            if (problem || arm !== 'service') return problem;
            const last = await this.upstreamLast();
            notes.push(
              last.systemChars > INSTRUCTIONS.length + 500
                ? `The service put ${last.systemChars - INSTRUCTIONS.length} characters of user context into the prompt.`
                : 'The service did not put claims or memory into the prompt (user context not loaded on this path).',
            );
            return undefined;
          },
          notes,
        }),
      );
    }
    if (want('background')) results.push(await this.backgroundScenario(results));
    if (want('resume-remote')) results.push(await this.resumeRemote());
    return results;
  }

  // ---------------------------------------------------------------- durable turns

  /**
   * Background turns on the service (JSON `background: true`, then the stream resumed at once on
   * the same instance) against the relay's foreground stream of the same reply: the relay has no
   * background mode. With stream-1 in the same run, the service's foreground figures are noted.
   */
  private async backgroundScenario(earlier: ScenarioResult[]): Promise<ScenarioResult> {
    const o = this.options;
    const foreground = (arm: Arm) =>
      this.turnWorkload(arm, 'stream', { input: 'Tell me a story.', stream: true });
    const workload = (arm: Arm) =>
      arm === 'service' ? backgroundWorkload(foreground(arm), [this.serviceUrl], null) : foreground(arm);
    const result = await this.comparison({
      key: 'background',
      title: `Background ${o.tokens}-token turn, stream resumed on its replica`,
      setup: `1 client back to back; POST /v1/responses with background: true (JSON, answers queued), then at once GET /v1/responses/{id}?stream=true on the same instance; TTFT = first text delta, total = response.completed, both from the POST; first token after ${o.ttftMs} ms, then all ${o.tokens} tokens as fast as they go. The bare relay has no background mode: its arm is the same reply streamed in the foreground`,
      arms: ['relay', 'relayPg', 'service'],
      phase: this.closedPhase(1, 6, 1.5, 0),
      workload,
      check: (arm) => this.checkReply(arm, workload(arm), o.tokens),
    });
    const accepted = result.arms.service?.accepted;
    if (accepted)
      result.notes.push(
        `The POST answered (status queued) after p50 ${fmt(accepted.p50)} ms, p99 ${fmt(accepted.p99)} ms.`,
      );
    const fg = earlier.find((scenario) => scenario.key === 'stream-1')?.arms.service;
    const bg = result.arms.service;
    if (fg && bg) {
      const withDb = (arm: ArmResult) => (arm.cpuMsPerTurn ?? 0) + (arm.databaseCpuMsPerTurn ?? 0);
      result.notes.push(
        `Service in the foreground (stream-1, same run): TTFT p50 ${fmt(fg.ttft?.p50)} ms, total p50 ${fmt(fg.total?.p50)} ms, CPU ${fmt(withDb(fg))} ms/turn with database; background: TTFT p50 ${fmt(bg.ttft?.p50)} ms, total p50 ${fmt(bg.total?.p50)} ms, CPU ${fmt(withDb(bg))} ms/turn (${fmt(withDb(bg) - withDb(fg))} more).`,
      );
    }
    return result;
  }

  /** A second service instance on the bench database (on embedded, through the service's server). */
  private async startReplica(): Promise<void> {
    const address = await this.database.address();
    const url = new URL(address.url);
    if (this.database.kind === 'postgresql') url.searchParams.set('application_name', REPLICA_APPLICATION);
    const port = await freePort();
    const env: Record<string, string> = {
      ...this.serviceEnv(port),
      DATABASE_URL: url.toString(),
      MIGRATIONS_RUN_ON_BOOT: 'false',
    };
    delete env.EMBEDDED_DATA_DIR;
    this.replica = startNode(
      'replica',
      [...this.options.serviceNodeArgs, join(DIST, 'src/main.js')],
      env,
      true,
      this.logFile('replica'),
      this.nodePath,
    );
    this.replicaUrl = `http://127.0.0.1:${port}`;
    await waitForHttp(`${this.replicaUrl}/readyz`, this.replica);
    this.log(`second instance on ${this.replicaUrl} (same ${this.database.kind} database)`);
  }

  /**
   * Background turns run by the service (A), each followed at once (`starting_after=0`) on A,
   * from memory, and on a second instance (B), which reads the database every RESUME_POLL_MS:
   * how much later B sees each event, and what following costs B and the database. Interleaved
   * with the same turns followed on A only, so A's (and on embedded, the database's) extra work
   * for B shows too.
   */
  private async resumeRemote(): Promise<ScenarioResult> {
    const o = this.options;
    const clients = 8;
    const settings = durableSettings(process.env);
    const streamMs = o.ttftMs + o.tokens * o.intervalMs;
    const scenario: ScenarioResult = {
      key: 'resume-remote',
      title: `Background turns followed on another replica (${clients} at once)`,
      setup: `${clients} clients back to back, each: POST background: true on instance A, then at once GET ?stream=true&starting_after=0 on A (follows from memory) and on instance B (same database; reads it every RESUME_POLL_MS = ${settings.pollMs} ms; A stores events every BACKGROUND_EVENT_FLUSH_MS = ${settings.flushMs} ms); first token after ${o.ttftMs} ms, then one token every ${o.intervalMs} ms (${o.tokens} tokens); interleaved with the same turns followed on A only`,
      arms: {},
      added: {
        ttftP50: null,
        ttftP99: null,
        totalP50: null,
        totalP99: null,
        gapP99: null,
        stalls: null,
        cpuMsPerTurn: null,
      },
      notes: [],
    };
    if (!this.serviceAvailable) {
      scenario.notes.push(`service not measured: ${this.serviceUnavailable}`);
      return scenario;
    }
    try {
      await this.startReplica();
      const foreground = this.turnWorkload('service', 'paced', { input: 'Tell me a story.', stream: true });
      const workloads = {
        local: backgroundWorkload(foreground, [this.serviceUrl], 0),
        remote: backgroundWorkload(foreground, [this.serviceUrl, this.replicaUrl], 0),
      };
      const checked = await followOnce(this.agent, workloads.remote);
      const problem = checked.created.ok
        ? compareFollowers(checked.followers, replyText(o.tokens))
        : checked.created.error;
      if (problem) {
        scenario.notes.push(`service excluded: the check failed (${problem})`);
        this.excluded.push(`resume-remote: service (${problem})`);
        this.log(`resume-remote: check failed (${problem})`);
        return scenario;
      }
      this.log(`${scenario.title} [A only, A + B]`);
      const phase = {
        ...this.closedPhase(clients, 10, Math.min(4, 1 + streamMs / 1000), o.intervalMs),
        rampMs: Math.min(streamMs, 3000),
      };
      const accumulated = new Map<'local' | 'remote', Accumulated>();
      for (let round = 0; round < o.rounds; round++) {
        const order = round % 2 === 0 ? (['local', 'remote'] as const) : (['remote', 'local'] as const);
        for (const which of order) {
          const warmupMs = round === 0 ? phase.warmupMs : Math.min(phase.warmupMs, 1000);
          const { result, cpu, loop } = await this.runPhase({
            ...phase,
            warmupMs,
            durationMs: phase.durationMs - phase.warmupMs + warmupMs,
            workload: workloads[which],
          });
          accumulate(accumulated, which, result, cpu, loop.service);
        }
      }
      const local = accumulated.get('local');
      const remote = accumulated.get('remote');
      if (remote) {
        scenario.arms.service = armResult('service', remote);
        const turns = remote.results.reduce((sum, r) => sum + r.turnsInWindow, 0);
        const followerSeconds =
          remote.results.reduce((sum, r) => sum + (r.followerMsInWindow ?? 0), 0) / 1000;
        const per = (value: number, known: boolean, by: number) => (known && by > 0 ? value / by : null);
        scenario.remote = {
          pollMs: settings.pollMs,
          flushMs: settings.flushMs,
          clients,
          completedDelay: summarize(remote.results.flatMap((r) => r.completedDelays ?? [])),
          deltaDelay: summarize(remote.results.flatMap((r) => r.deltaDelays ?? [])),
          followerSeconds,
          replicaCpuMsPerTurn: per(remote.cpu.replica, remote.cpuKnown.replica, turns),
          replicaCpuMsPerFollowerSecond: per(remote.cpu.replica, remote.cpuKnown.replica, followerSeconds),
          replicaDatabaseCpuMsPerFollowerSecond:
            this.database.kind === 'postgresql'
              ? per(remote.cpu.replicaDatabase, remote.cpuKnown.replicaDatabase, followerSeconds)
              : null,
          localOnly: local ? armResult('service', local) : null,
        };
        const r = scenario.remote;
        this.log(
          `  B later than A: response.completed p50 ${fmt(r.completedDelay?.p50)} p99 ${fmt(r.completedDelay?.p99)} ms, text deltas p50 ${fmt(r.deltaDelay?.p50)} p99 ${fmt(r.deltaDelay?.p99)} ms; B ${fmt(r.replicaCpuMsPerFollowerSecond)} CPU ms per follower-second (db ${fmt(r.replicaDatabaseCpuMsPerFollowerSecond)}); A ${fmt(scenario.arms.service.cpuMsPerTurn)} vs ${fmt(r.localOnly?.cpuMsPerTurn)} ms/turn alone`,
        );
      }
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      scenario.notes.push(`not measured: ${message}`);
      this.excluded.push(`resume-remote: service (${message})`);
      this.log(`resume-remote failed: ${message}`);
    } finally {
      await this.replica?.stop();
      this.replica = undefined;
    }
    return scenario;
  }

  private userContextWorkload(arm: Arm): Workload {
    return this.turnWorkload(arm, 'user-context', {
      input: 'What do you know about me?',
      stream: true,
      headers: { 'x-user-id': USER_CONTEXT_USER },
    });
  }

  private threadWorkload(arm: Arm, length: number): Workload {
    const tip = this.threadTips.get(`${arm}:${length}`);
    if (arm === 'upstream' || arm === 'peer') {
      const history: ChatMessage[] = [];
      for (let turn = 1; turn <= length; turn++) {
        history.push(
          { role: 'user', content: threadQuestion(turn) },
          { role: 'assistant', content: replyText(20) },
        );
      }
      return this.turnWorkload(arm, 'thread', { input: 'One more question.', stream: true, history });
    }
    return this.turnWorkload(arm, 'thread', { input: 'One more question.', stream: true, previous: tip });
  }

  /** Builds one thread per length and arm, turn by turn, through the relay and the service. */
  private async buildThreads(): Promise<void> {
    const arms = RESPONSES_ARMS.filter((arm) => this.available(arm));
    const started = performance.now();
    await Promise.all(
      arms.flatMap((arm) =>
        THREAD_LENGTHS.map(async (length) => {
          let previous: string | undefined;
          for (let turn = 1; turn <= length; turn++) {
            const result = await this.once(
              arm,
              this.turnWorkload(arm, 'thread', { input: threadQuestion(turn), stream: false, previous }),
            );
            if (!result.ok || !result.response)
              throw new Error(`building a ${length}-turn thread on ${arm}: ${result.error}`);
            previous = result.response.id;
          }
          this.threadTips.set(`${arm}:${length}`, previous!);
        }),
      ),
    );
    this.log(
      `built threads of ${THREAD_LENGTHS.join(', ')} turns in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
  }

  private async createClaims(): Promise<string> {
    if (!this.serviceAvailable) return 'claims not created (service unavailable)';
    const claims = Array.from({ length: 20 }, (_, index) => ({
      userId: USER_CONTEXT_USER,
      claimKey: `profile.claim_${index + 1}`,
      claimValue: { plan: 'enterprise', region: 'eu-west-1', seat: index + 1, note: 'x'.repeat(80) },
    }));
    const res = await fetch(`${this.serviceUrl}/v1/user-claims/bulk`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': this.seeded!.apiKey },
      body: JSON.stringify({ claims }),
    });
    await res.arrayBuffer();
    return res.status === 200
      ? '20 claims created with POST /v1/user-claims/bulk.'
      : `Claims could not be created (HTTP ${res.status}).`;
  }

  // ---------------------------------------------------------------- sweep

  async sweep(): Promise<SweepStep[]> {
    const o = this.options;
    if (o.only.length > 0 && !o.only.includes('sweep')) return [];
    this.log(`sweep of arrival rates ${o.rates.join(', ')}/s (one-word turns, open loop)`);
    const steps: SweepStep[] = [];
    const stopped = new Set<Arm>(SERVER_ARMS.filter((arm) => !this.available(arm)));
    let serviceMisses = 0;
    for (const [index, rate] of o.rates.entries()) {
      const step: SweepStep = { rate, addedP99: null, held: null };
      const order = SERVER_ARMS.map((_, at) => SERVER_ARMS[(at + index) % SERVER_ARMS.length]);
      for (const arm of order) {
        if (stopped.has(arm)) continue;
        const warmupMs = 1000;
        const { result, loop } = await this.runPhase({
          mode: 'open',
          concurrency: 0,
          rate,
          durationMs: warmupMs + this.seconds(4),
          warmupMs,
          rampMs: 0,
          timeoutMs: 15_000,
          maxOutstanding: 2000,
          stallMs: 1e9,
          workload: this.turnWorkload(arm, 'one-word', { input: 'Say one word.', stream: false }),
        });
        const total = summarize(result.total);
        const errors = Object.values(result.errors).reduce((a, b) => a + b, 0);
        step[arm] = {
          p50: total?.p50 ?? null,
          p99: total?.p99 ?? null,
          errorRate: result.samples > 0 ? errors / result.samples : 1,
          achievedRate: result.windowMs > 0 ? (result.turnsInWindow * 1000) / result.windowMs : 0,
          loop: loop[arm] ?? null,
        };
      }
      const relay = step.relay;
      const service = step.service;
      const peer = step.peer;
      if (peer && (peer.errorRate > 0.01 || peer.achievedRate < 0.95 * rate)) {
        // The peer past its knee says where it bends; the sweep goes on for the service.
        stopped.add('peer');
        this.notes.push(`The peer gateway stopped keeping up at ${rate}/s; the sweep went on without it.`);
      }
      if (relay && (relay.errorRate > 0.01 || relay.achievedRate < 0.95 * rate)) {
        stopped.add('relay');
        this.notes.push(`The bare relay itself stopped keeping up at ${rate}/s; the sweep ends there.`);
      }
      if (relay && service) {
        step.addedP99 = minus(service.p99, relay.p99);
        step.held =
          step.addedP99 !== null &&
          step.addedP99 < o.heldP99Ms &&
          service.errorRate < 0.01 &&
          service.achievedRate >= 0.95 * rate;
        // Past the knee (even the median is over the bar, or arrivals are lost) higher rates
        // only repeat the miss; a p99 miss alone keeps the sweep going, to show where it bends.
        const saturated =
          service.errorRate >= 0.01 ||
          service.achievedRate < 0.95 * rate ||
          (minus(service.p50, relay.p50) ?? 0) >= o.heldP99Ms;
        serviceMisses = saturated ? serviceMisses + 1 : 0;
        if (serviceMisses >= 2) stopped.add('service');
      }
      steps.push(step);
      this.log(
        `  ${rate}/s relay p50 ${fmt(relay?.p50)} p99 ${fmt(relay?.p99)} | relay-pg p50 ${fmt(step.relayPg?.p50)} p99 ${fmt(step.relayPg?.p99)} | peer p50 ${fmt(peer?.p50)} p99 ${fmt(peer?.p99)} | service p50 ${fmt(service?.p50)} p99 ${fmt(service?.p99)} err ${service ? (service.errorRate * 100).toFixed(1) : '-'}% ${step.held === null ? '' : step.held ? 'held' : 'NOT held'}`,
      );
      // Without a relay that keeps up, "service minus relay" means nothing any more; once the
      // service has missed twice in a row, higher rates only repeat the miss.
      if (stopped.has('relay') || (this.serviceAvailable && stopped.has('service'))) break;
    }
    return steps;
  }

  // ---------------------------------------------------------------- memory per open stream

  async slowStreams(): Promise<MemoryResult[]> {
    const o = this.options;
    if (o.only.length > 0 && !o.only.includes('slow-streams')) return [];
    const results: MemoryResult[] = [];
    for (const streams of o.slowStreams) {
      await this.restartServers();
      const result: MemoryResult = { streams, intervalMs: o.slowIntervalMs };
      const profile = this.profiles()[`slow-${streams}`];
      const arms = SERVER_ARMS.filter((arm) => this.available(arm));
      for (const arm of arms) {
        const child = this.child(arm)!;
        this.log(`holding ${streams} slow streams open on the ${arm}`);
        await sleep(2000);
        const profiling = arm === 'service' && this.options.profileScenarios;
        const usageBefore = profiling ? await this.memoryUsage() : null;
        const baseline = await this.rssMedian(child.pid, 3, 200);
        let plateau: Promise<number | null> | undefined;
        let usageOpen: Promise<MemoryUsage | null> | undefined;
        if (profiling) this.service!.process.kill('SIGUSR2');
        const { result: phase } = await this.runPhase(
          {
            mode: 'hold',
            concurrency: streams,
            rate: 500,
            durationMs: 0,
            warmupMs: 0,
            rampMs: this.slowRampMs(streams),
            timeoutMs: profile.ttftMs + profile.tokens * profile.intervalMs + 60_000,
            // Streams still waiting for their first token, at most: the ramp follows the server.
            maxOutstanding: 100,
            stallMs: o.slowIntervalMs + o.stallMs,
            workload: this.turnWorkload(arm, `slow-${streams}`, { input: 'Take your time.', stream: true }),
          },
          (id) => {
            plateau = this.rssMedian(child.pid, 5, 300);
            usageOpen = plateau.then(() => (profiling ? this.memoryUsage() : null));
            void usageOpen.then(() => this.loadgen!.process.send({ type: 'release', id }));
          },
        );
        const plateauKiB = plateau ? await plateau : null;
        if (profiling)
          [result.profile] = await this.stopScenarioProfile(`${streams} slow streams`, phase.samples);
        const opened = usageOpen ? await usageOpen : null;
        const open = phase.openAtPlateau ?? 0;
        const entry: MemoryArm = {
          baselineKiB: baseline,
          plateauKiB,
          open,
          perStreamKiB:
            baseline !== null && plateauKiB !== null && open > 0 ? (plateauKiB - baseline) / open : null,
          ttft: summarize(phase.ttft),
          gap: summarize(phase.gaps),
          stalls: phase.stalls,
          errors: phase.errors,
          ...(usageBefore && opened ? { memoryUsage: { before: usageBefore, open: opened } } : {}),
        };
        result[arm] = entry;
        this.log(
          `  ${arm}: ${open}/${streams} open, RSS ${fmtKiB(baseline)} → ${fmtKiB(plateauKiB)}, ${entry.perStreamKiB?.toFixed(1) ?? '-'} KiB/stream, errors ${JSON.stringify(phase.errors)}`,
        );
      }
      results.push(result);
    }
    return results;
  }

  /** The profiled service's process.memoryUsage() after a full GC (see cpu-profiler.ts). */
  private async memoryUsage(): Promise<MemoryUsage | null> {
    this.service!.process.kill('SIGWINCH');
    const file = `${this.scenarioPrefix()}.${++this.memorySnapshots}.memory.json`;
    const deadline = Date.now() + 60_000;
    while (!existsSync(file) && Date.now() < deadline) await sleep(100);
    return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as MemoryUsage) : null;
  }

  private async rssMedian(pid: number, count: number, everyMs: number): Promise<number | null> {
    const values: number[] = [];
    for (let index = 0; index < count; index++) {
      const value = rssKiB(pid);
      if (value !== null) values.push(value);
      if (index < count - 1) await sleep(everyMs);
    }
    return values.length > 0 ? median(values) : null;
  }

  // ---------------------------------------------------------------- soak

  async soak(): Promise<SoakResult | null> {
    const o = this.options;
    if (o.soakMinutes <= 0 || !this.serviceAvailable) return null;
    if (o.only.length > 0 && !o.only.includes('soak')) return null;
    const rate = 50;
    this.log(`memory soak: ${o.soakMinutes} min of streamed turns at ${rate}/s on the service`);
    const samples: SoakResult['samples'] = [];
    const started = performance.now();
    const pid = this.service!.pid;
    const timer = setInterval(() => {
      const rss = rssKiB(pid);
      if (rss !== null)
        samples.push({ seconds: Math.round((performance.now() - started) / 1000), rssKiB: rss });
    }, 5000);
    const durationMs = Math.round(o.soakMinutes * 60_000);
    const { result } = await this.runPhase({
      mode: 'open',
      concurrency: 0,
      rate,
      durationMs,
      warmupMs: 0,
      rampMs: 0,
      timeoutMs: 60_000,
      maxOutstanding: 5000,
      stallMs: o.intervalMs + o.stallMs,
      workload: this.turnWorkload('service', 'paced', { input: 'Tell me a story.', stream: true }),
    });
    clearInterval(timer);
    const tail = samples.slice(Math.floor(samples.length / 5));
    return {
      minutes: o.soakMinutes,
      rate,
      samples,
      slopeKiBPerMinute: slope(tail.map((s) => [s.seconds / 60, s.rssKiB])),
      errors: result.errors,
      turns: result.turnsInWindow,
    };
  }

  // ---------------------------------------------------------------- statements per turn and CPU profile

  /** pg_waldump on the database's server, when it is local and readable (else a note says why). */
  private async walMeter(database: BenchDatabase): Promise<WalMeter | null> {
    if (!database.server) return null;
    const opened = await openWalMeter(database.server.url, database.server.database);
    if ('meter' in opened) return opened.meter;
    this.notes.push(`WAL per turn not measured: ${opened.unavailable}.`);
    return null;
  }

  /**
   * The persisting relay's turns counted the same way as the service's: a second relay-pg process
   * whose pool goes through a counting proxy, JSON and streamed turns one after another.
   */
  private async probeRelayPg(repetitions: number): Promise<StatementsResult[]> {
    if (!this.relayPgAvailable || !this.relayDatabase) return [];
    const address = await this.relayDatabase.address();
    const counter = new PgCounter(address.host, address.port);
    const url = new URL(address.url);
    url.hostname = '127.0.0.1';
    url.port = String(await counter.start());
    const relay = startNode(
      'probe relay-pg',
      [join(DIST, 'bench/relay.js')],
      {
        BENCH_UPSTREAM_URL: `${this.upstreamUrl}/v1`,
        BENCH_RELAY_ASSISTANTS: this.relayRoutes,
        BENCH_PORT: '0',
        BENCH_RELAY_DATABASE_URL: url.toString(),
        BENCH_RELAY_POOL_MAX: process.env.DATABASE_POOL_MAX ?? '20',
      },
      true,
      this.logFile('probe-relay-pg'),
      this.nodePath,
    );
    const wal = await this.walMeter(this.relayDatabase);
    const results: StatementsResult[] = [];
    try {
      const ready = await waitForMessage<{ type: string; port: number }>(relay, 'ready');
      const base = `http://127.0.0.1:${ready.port}`;
      const database = this.relayDatabase;
      const probe: DatabaseProbe = { counter, wal, backends: () => database.backendPids(RELAY_APPLICATION) };
      for (const [kind, workload] of [
        [
          'new turn, JSON reply',
          this.turnWorkload('relayPg', 'one-word', { input: 'Say one word.', stream: false }),
        ],
        [
          `new turn, streamed ${this.options.tokens} tokens`,
          this.turnWorkload('relayPg', 'stream', { input: 'Tell me a story.', stream: true }),
        ],
      ] as const) {
        const onProbe: Workload = { ...workload, target: { ...workload.target, baseUrl: base } };
        for (let warm = 0; warm < 2; warm++) await this.once('relayPg', onProbe);
        const measured = await measureTurns(
          probe,
          kind,
          'relayPg',
          repetitions,
          async () => (await this.once('relayPg', onProbe)).ok,
        );
        if (measured) results.push(measured);
      }
    } finally {
      await relay.stop();
      await counter.stop();
      await wal?.close();
    }
    return results;
  }

  /**
   * A second service instance on the same database, reached through the counting proxy, so
   * statements are counted without slowing the measured instance; it is also the one profiled.
   */
  async probe(): Promise<{ statements: StatementsResult[]; profiles: ProfileResult[] }> {
    const o = this.options;
    if (!this.serviceAvailable || (!o.statements && !o.profile)) return { statements: [], profiles: [] };
    if (o.only.length > 0 && !o.only.includes('statements') && !o.only.includes('profile')) {
      return { statements: [], profiles: [] };
    }
    const address = await this.database.address();
    const counter = new PgCounter(address.host, address.port);
    const proxyPort = await counter.start();
    const url = new URL(address.url);
    url.hostname = '127.0.0.1';
    url.port = String(proxyPort);
    const port = await freePort();
    const profilePath = join(this.resultsDir, 'service');
    const env = {
      ...this.serviceEnv(port),
      DATABASE_URL: url.toString(),
      MIGRATIONS_RUN_ON_BOOT: 'false',
      BENCH_CPU_PROFILE: profilePath,
    };
    delete (env as Record<string, string | undefined>).EMBEDDED_DATA_DIR;
    const probe = startNode(
      'probe service',
      [
        ...this.options.serviceNodeArgs,
        '--import',
        join(DIST, 'bench/cpu-profiler.js'),
        join(DIST, 'src/main.js'),
      ],
      env,
      false,
      this.logFile('probe-service'),
      this.nodePath,
    );
    const base = `http://127.0.0.1:${port}`;
    const statements: StatementsResult[] = [];
    const profiles: ProfileResult[] = [];
    try {
      await waitForHttp(`${base}/readyz`, probe);
      const onProbe = (workload: Workload): Workload => ({
        ...workload,
        target: { ...workload.target, baseUrl: base },
      });
      const kinds: { kind: string; workload: Workload; turns: number }[] = [
        {
          kind: 'new turn, JSON reply',
          workload: this.turnWorkload('service', 'one-word', { input: 'Say one word.', stream: false }),
          turns: 1,
        },
        {
          kind: `new turn, streamed ${o.tokens} tokens`,
          workload: this.turnWorkload('service', 'stream', { input: 'Tell me a story.', stream: true }),
          turns: 1,
        },
        {
          kind: 'function-call round trip (2 requests)',
          workload: this.turnWorkload('service', 'tool', {
            input: 'Weather?',
            stream: true,
            tools: true,
            kind: 'function-call',
          }),
          turns: 1,
        },
        ...(this.threadTips.size > 0
          ? THREAD_LENGTHS.map((length) => ({
              kind: `continue a ${length}-turn thread`,
              workload: this.threadWorkload('service', length),
              turns: 1,
            }))
          : []),
        {
          kind: 'turn with 20 claims and 50 memory items',
          workload: this.userContextWorkload('service'),
          turns: 1,
        },
        {
          // Followed on the same instance (from memory): the turn's own writes, events included.
          kind: `background turn, streamed ${o.tokens} tokens`,
          workload: backgroundWorkload(
            onProbe(this.turnWorkload('service', 'stream', { input: 'Tell me a story.', stream: true })),
            [base],
            null,
          ),
          turns: 1,
        },
      ];
      if (o.statements) {
        const repetitions = o.quick ? 5 : 20;
        const wal = await this.walMeter(this.database);
        const relayPids = () =>
          this.relayDatabase?.kind === 'postgresql'
            ? this.relayDatabase.backendPids(RELAY_APPLICATION)
            : Promise.resolve([]);
        const dbProbe: DatabaseProbe = {
          counter,
          wal,
          // The probe instance's backends (the measured instance and relay-pg are idle meanwhile).
          backends: async () => {
            const relay = new Set(await relayPids());
            return (await this.database.backendPids()).filter((pid) => !relay.has(pid));
          },
        };
        try {
          for (const { kind, workload } of kinds) {
            const probeWorkload = onProbe(workload);
            for (let warm = 0; warm < 2; warm++) await this.once('service', probeWorkload);
            const measured = await measureTurns(
              dbProbe,
              kind,
              'service',
              repetitions,
              async () => (await this.once('service', probeWorkload)).ok,
            );
            if (measured) statements.push(measured);
          }
          statements.push(...(await this.probeRelayPg(repetitions)));
        } finally {
          await wal?.close();
        }
        this.log(
          `statements per turn: ${statements.map((s) => `${s.arm === 'relayPg' ? 'relay-pg: ' : ''}${s.kind} ${s.perTurn.statements.toFixed(1)} (WAL ${s.perTurn.wal ? Math.round(s.perTurn.wal.bytes) : '-'} B, db CPU ${fmt(s.perTurn.databaseCpuMs)} ms)`).join('; ')}`,
        );
      }
      if (o.profile) {
        // One profile per kind of work, so a turn's fixed cost and a token's cost show apart.
        const segments: { label: string; workload: Workload; concurrency: number; seconds: number }[] = [
          {
            label: 'new turns: one-word JSON replies, 8 clients',
            workload: this.turnWorkload('service', 'one-word', { input: 'Say one word.', stream: false }),
            concurrency: 8,
            seconds: 5,
          },
          {
            label: `streamed tokens: 100 concurrent ${o.tokens}-token streams, one token per ${o.intervalMs} ms`,
            workload: this.turnWorkload('service', 'paced', { input: 'Tell me a story.', stream: true }),
            concurrency: 100,
            seconds: 6,
          },
        ];
        if (this.threadTips.size > 0) {
          segments.push({
            label: 'continuing a 200-turn thread, 4 clients',
            workload: this.threadWorkload('service', 200),
            concurrency: 4,
            seconds: 4,
          });
        }
        for (const [index, segment] of segments.entries()) {
          probe.process.kill('SIGUSR2');
          await sleep(200);
          const { result } = await this.runPhase({
            ...this.closedPhase(segment.concurrency, segment.seconds, 0, 0),
            durationMs: this.seconds(segment.seconds),
            rampMs: 1000,
            workload: onProbe(segment.workload),
          });
          probe.process.kill('SIGUSR2');
          const summary = await readProfiles(`${profilePath}.${index + 1}`, result.turnsInWindow);
          if (!summary) continue;
          profiles.push({ label: segment.label, summary });
          this.log(
            `CPU profile, ${segment.label}: ${summary.byArea
              .slice(0, 5)
              .map((l) => `${l.name} ${l.percent.toFixed(0)}%`)
              .join(', ')}`,
          );
        }
      }
    } finally {
      await probe.stop();
      await counter.stop();
    }
    return { statements, profiles };
  }
}

/** Waits for a CPU profile (written last) and reads it with its allocation profile, if any. */
async function readProfiles(prefix: string, turns: number): Promise<ProfileSummary | null> {
  const cpu = `${prefix}.cpuprofile`;
  const deadline = Date.now() + 20_000;
  while (!existsSync(cpu) && Date.now() < deadline) await sleep(200);
  if (!existsSync(cpu)) return null;
  const summary = summarizeProfile(JSON.parse(readFileSync(cpu, 'utf8')));
  const heap = `${prefix}.heapprofile`;
  if (existsSync(heap))
    summary.allocations = summarizeAllocations(JSON.parse(readFileSync(heap, 'utf8')), turns);
  return summary;
}

/** Adds one measured phase of an arm to what the scenario has gathered for it. */
/** The twin beside the service arm: medians and the ratio of the two, as measured side by side. */
function twinNote(label: string, service: ArmResult, twin: ArmResult): string {
  const ratio = (a: number | null | undefined, b: number | null | undefined) =>
    a == null || b == null || b === 0 ? '-' : (a / b).toFixed(3);
  return (
    `Service ${label} vs without (interleaved, same run): TTFT p50 ${fmt(twin.ttft?.p50)} vs ${fmt(service.ttft?.p50)} ms ` +
    `(×${ratio(twin.ttft?.p50, service.ttft?.p50)}), total p50 ${fmt(twin.total?.p50)} vs ${fmt(service.total?.p50)} ms ` +
    `(×${ratio(twin.total?.p50, service.total?.p50)}), CPU ${fmt(twin.cpuMsPerTurn)} vs ${fmt(service.cpuMsPerTurn)} ms/turn ` +
    `(×${ratio(twin.cpuMsPerTurn, service.cpuMsPerTurn)}), ${twin.samples} and ${service.samples} turns`
  );
}

function accumulate<K>(
  accumulated: Map<K, Accumulated>,
  key: K,
  result: PhaseResult,
  cpu: Partial<Record<Process, number>>,
  loop: LoopStats | null | undefined,
  activity?: ActivityWindow,
): void {
  let entry = accumulated.get(key);
  if (!entry) {
    const zero = Object.fromEntries(PROCESSES.map((process) => [process, 0])) as Record<Process, number>;
    const known = Object.fromEntries(PROCESSES.map((process) => [process, true])) as Record<Process, boolean>;
    entry = { results: [], loops: [], activity: [], cpu: zero, cpuKnown: known };
    accumulated.set(key, entry);
  }
  entry.results.push(result);
  if (loop) entry.loops.push(loop);
  if (activity) entry.activity.push(activity);
  for (const process of PROCESSES) {
    const value = cpu[process];
    if (value === undefined) entry.cpuKnown[process] = false;
    else entry.cpu[process] += value;
  }
}

function armResult(arm: Arm, entry: Accumulated): ArmResult {
  const merge = (pick: (result: PhaseResult) => number[]) => {
    const all: number[] = [];
    for (const result of entry.results) for (const value of pick(result)) all.push(value);
    return all;
  };
  const samples = entry.results.reduce((sum, r) => sum + r.samples, 0);
  const errors: Record<string, number> = {};
  for (const result of entry.results) {
    for (const [reason, count] of Object.entries(result.errors))
      errors[reason] = (errors[reason] ?? 0) + count;
  }
  const errorCount = Object.values(errors).reduce((a, b) => a + b, 0);
  const windowMs = entry.results.reduce((sum, r) => sum + r.windowMs, 0);
  const turns = entry.results.reduce((sum, r) => sum + r.turnsInWindow, 0);
  const tokens = entry.results.reduce((sum, r) => sum + r.tokensInWindow, 0);
  const server: Process = arm;
  const perTurn = (process: Process) =>
    entry.cpuKnown[process] && turns > 0 ? entry.cpu[process] / turns : null;
  return {
    samples,
    errors,
    errorRate: samples > 0 ? errorCount / samples : 0,
    ttft: summarize(merge((r) => r.ttft)),
    total: summarize(merge((r) => r.total)),
    gap: summarize(merge((r) => r.gaps)),
    stalls: entry.results.reduce((sum, r) => sum + r.stalls, 0),
    tokensPerSecond: windowMs > 0 ? (tokens * 1000) / windowMs : null,
    turnsPerSecond: windowMs > 0 ? (turns * 1000) / windowMs : null,
    cpuMsPerTurn: perTurn(server),
    upstreamCpuMsPerTurn: perTurn('upstream'),
    databaseCpuMsPerTurn:
      arm === 'service' ? perTurn('database') : arm === 'relayPg' ? perTurn('relayPgDatabase') : null,
    loop: mergeLoops(entry.loops),
    databaseSessions: arm === 'service' || arm === 'relayPg' ? sessions(entry.activity, arm) : null,
    ...(entry.results.some((r) => r.accepted) ? { accepted: summarize(merge((r) => r.accepted ?? [])) } : {}),
  };
}

/** Average sessions per state of one side's backends over the windows (null without samples). */
function sessions(windows: ActivityWindow[], side: 'service' | 'relayPg'): Record<string, number> | null {
  const samples = windows.reduce((sum, window) => sum + window.samples, 0);
  if (samples === 0) return null;
  const total: Record<string, number> = {};
  for (const window of windows)
    for (const [state, count] of Object.entries(window[side])) total[state] = (total[state] ?? 0) + count;
  return Object.fromEntries(Object.entries(total).map(([state, count]) => [state, count / samples]));
}

/** Several windows' event-loop figures as one: mean utilisation and median, worst p99 and max. */
function mergeLoops(loops: LoopStats[]): LoopStats | null {
  if (loops.length === 0) return null;
  const mean = (pick: (loop: LoopStats) => number) =>
    loops.reduce((sum, loop) => sum + pick(loop), 0) / loops.length;
  return {
    utilization: mean((loop) => loop.utilization),
    delayP50Ms: mean((loop) => loop.delayP50Ms),
    delayP99Ms: Math.max(...loops.map((loop) => loop.delayP99Ms)),
    delayMaxMs: Math.max(...loops.map((loop) => loop.delayMaxMs)),
    samples: loops.reduce((sum, loop) => sum + loop.samples, 0),
    pool: mergePools(loops.flatMap((loop) => (loop.pool ? [loop.pool] : []))),
  };
}

/** Several windows' pool figures as one: sums, mean median wait, worst p99 and maxima. */
function mergePools(pools: PoolStats[]): PoolStats | null {
  if (pools.length === 0) return null;
  const most = (pick: (pool: PoolStats) => number) => Math.max(...pools.map(pick));
  return {
    acquisitions: pools.reduce((sum, pool) => sum + pool.acquisitions, 0),
    waited: pools.reduce((sum, pool) => sum + pool.waited, 0),
    waitP50Ms: pools.reduce((sum, pool) => sum + pool.waitP50Ms, 0) / pools.length,
    waitP99Ms: most((pool) => pool.waitP99Ms),
    waitMaxMs: most((pool) => pool.waitMaxMs),
    maxWaiting: most((pool) => pool.maxWaiting),
    maxOpen: most((pool) => pool.maxOpen),
  };
}

function threadQuestion(turn: number): string {
  return `Question ${turn}: how does the relay keep up with the load at this point?`;
}

function slope(points: [number, number][]): number | null {
  if (points.length < 3) return null;
  const n = points.length;
  const meanX = points.reduce((s, p) => s + p[0], 0) / n;
  const meanY = points.reduce((s, p) => s + p[1], 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - meanX) * (y - meanY);
    den += (x - meanX) ** 2;
  }
  return den === 0 ? null : num / den;
}

export function fmt(value: number | null | undefined, digits = 2): string {
  return value === null || value === undefined || !Number.isFinite(value) ? '-' : value.toFixed(digits);
}

function fmtKiB(value: number | null): string {
  return value === null ? '-' : `${(value / 1024).toFixed(1)} MiB`;
}
