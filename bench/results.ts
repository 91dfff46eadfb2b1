import type { MachineInfo } from './environment.js';
import type { BenchOptions } from './options.js';
import type { StatementCounts, StatementStats } from './pg-counter.js';
import type { WalUsage } from './wal-meter.js';
import type { ProfileSummary } from './profile-summary.js';
import type { Distribution } from './stats.js';

/** Everything one run measured; written to bench/results/*.json and rendered into the docs. */

/** A server's event loop over a measurement window (measured by loop-monitor.ts). */
export interface LoopStats {
  /** node-postgres pools of the server, if it has any (service, persisting relay). */
  pool?: PoolStats | null;
  /** Share of the window the event loop was busy (performance.eventLoopUtilization). */
  utilization: number;
  /** How late a LOOP_RESOLUTION_MS timer fired, ms (monitorEventLoopDelay minus the resolution). */
  delayP50Ms: number;
  delayP99Ms: number;
  delayMaxMs: number;
  samples: number;
}

/**
 * A server's node-postgres pools over a measurement window: how long a query waited for a
 * connection (from pool.connect() to the connection) and how many waited at once.
 */
export interface PoolStats {
  acquisitions: number;
  /** Acquisitions that had to wait for a connection (none idle, pool at its size). */
  waited: number;
  waitP50Ms: number;
  waitP99Ms: number;
  waitMaxMs: number;
  /** Most callers queued at once, and most connections open. */
  maxWaiting: number;
  maxOpen: number;
}

/** Sampling interval of the event-loop delay histogram: Node's default, as prom-client's lag metric. */
export const LOOP_RESOLUTION_MS = 10;

/**
 * upstream: the fake model called directly; relay: the bare relay; relayPg: the persisting relay
 * (the bare relay plus one INSERT per turn, PostgreSQL only); peer: the peer gateway.
 */
export type Arm = 'upstream' | 'relay' | 'relayPg' | 'peer' | 'service';
export const ARMS: readonly Arm[] = ['upstream', 'relay', 'relayPg', 'peer', 'service'];
/** The arms that relay the upstream (everything but the direct call). */
export type ServerArm = Exclude<Arm, 'upstream'>;

export interface ArmResult {
  samples: number;
  errors: Record<string, number>;
  errorRate: number;
  ttft: Distribution | null;
  total: Distribution | null;
  gap: Distribution | null;
  stalls: number;
  tokensPerSecond: number | null;
  turnsPerSecond: number | null;
  /** CPU ms per turn of the process serving this arm (the upstream for the direct arm). */
  cpuMsPerTurn: number | null;
  /** CPU ms per turn of the fake upstream while this arm ran (should be equal across arms). */
  upstreamCpuMsPerTurn: number | null;
  /** CPU ms per turn of the PostgreSQL server backends (service and persisting relay on PostgreSQL). */
  databaseCpuMsPerTurn: number | null;
  /** The serving process's event loop over the measurement windows (worst window; see loop-monitor.ts). */
  loop?: LoopStats | null;
  /**
   * PostgreSQL: average sessions of this arm's backends in each state over the measurement
   * windows (pg_stat_activity every 50 ms: `CPU`, `Lock:tuple`, `IO:WALSync`, …; db-activity.ts).
   */
  databaseSessions?: Record<string, number> | null;
  /** Background turns: time until the POST answered (`queued`), ms. */
  accepted?: Distribution | null;
}

/**
 * resume-remote: background turns run by the measured instance (A) and followed at once both on
 * A (from memory) and on a second instance (B, through the database every RESUME_POLL_MS).
 */
export interface RemoteFollow {
  pollMs: number;
  flushMs: number;
  clients: number;
  /** How much later B saw `response.completed` than A, ms. */
  completedDelay: Distribution | null;
  /** How much later B saw each text delta than A, ms. */
  deltaDelay: Distribution | null;
  /** Seconds B's streams were open over the measurement windows. */
  followerSeconds: number;
  replicaCpuMsPerTurn: number | null;
  replicaCpuMsPerFollowerSecond: number | null;
  /** PostgreSQL: B's own backends (its reads); embedded: null (the database runs inside A). */
  replicaDatabaseCpuMsPerFollowerSecond: number | null;
  /** The same turns followed on A only (arms.service is A with B following). */
  localOnly: ArmResult | null;
}

export interface Added {
  ttftP50: number | null;
  ttftP99: number | null;
  totalP50: number | null;
  totalP99: number | null;
  gapP99: number | null;
  stalls: number | null;
  cpuMsPerTurn: number | null;
}

export interface ScenarioResult {
  key: string;
  title: string;
  setup: string;
  arms: Partial<Record<Arm, ArmResult>>;
  /** Service minus relay, same run. */
  added: Added;
  notes: string[];
  /** With --profile-scenarios: the measured service's profile during this scenario. */
  profile?: ProfileResult;
  /** resume-remote only. */
  remote?: RemoteFollow;
  /** The `fallbacks` scenarios: the service with another assistant, measured in the same rounds. */
  twin?: { label: string; arm: ArmResult };
}

export interface SweepStep {
  rate: number;
  relay?: StepArm;
  relayPg?: StepArm;
  peer?: StepArm;
  service?: StepArm;
  addedP99: number | null;
  held: boolean | null;
}

export interface StepArm {
  p50: number | null;
  p99: number | null;
  errorRate: number;
  achievedRate: number;
  loop?: LoopStats | null;
}

export interface MemoryArm {
  baselineKiB: number | null;
  plateauKiB: number | null;
  open: number;
  perStreamKiB: number | null;
  ttft: Distribution | null;
  gap: Distribution | null;
  stalls: number;
  errors: Record<string, number>;
  /** With --profile-scenarios: process.memoryUsage() after a full GC, before and while open. */
  memoryUsage?: { before: MemoryUsage; open: MemoryUsage };
}

export interface MemoryUsage {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

export interface MemoryResult {
  streams: number;
  intervalMs: number;
  relay?: MemoryArm;
  relayPg?: MemoryArm;
  peer?: MemoryArm;
  service?: MemoryArm;
  /** With --profile-scenarios: the service's profile while the streams opened and were held. */
  profile?: ProfileResult;
}

export interface SoakResult {
  minutes: number;
  rate: number;
  samples: { seconds: number; rssKiB: number }[];
  /** Least-squares slope after the first fifth of the soak. */
  slopeKiBPerMinute: number | null;
  errors: Record<string, number>;
  turns: number;
}

export interface StatementsResult {
  kind: string;
  /** The server that ran the turns (default: the service). */
  arm?: 'service' | 'relayPg';
  turns: number;
  perTurn: {
    statements: number;
    roundTrips: number;
    byVerb: Record<string, number>;
    /** Per distinct statement: calls, rows (command tags), wall ms (loaded machine: a ranking only). */
    byStatement?: Record<string, StatementStats>;
    /** WAL the bench database wrote (PostgreSQL with a local data directory; see wal-meter.ts). */
    wal?: WalUsage | null;
    /** CPU of the database backends (PostgreSQL; /proc/<pid>/schedstat). */
    databaseCpuMs?: number | null;
  };
}

export interface ProfileResult {
  label: string;
  summary: ProfileSummary;
}

export interface TargetCheck {
  target: string;
  measured: string;
  pass: boolean | null;
}

export interface BenchResults {
  startedAt: string;
  durationSeconds: number;
  command: string;
  options: BenchOptions;
  machine: MachineInfo;
  serviceAvailable: boolean;
  /** The peer gateway, when it was measured: versions and the workaround applied to it. */
  peer?: { versions: Record<string, string>; patch: string } | null;
  /** `node --version` of the measured servers (service, relay, peer); the bench's own is machine.node. */
  serverNode?: string;
  /**
   * Share of the machine's CPU used by processes outside the bench (and outside PostgreSQL), in
   * the second before the run and during it: other work on the machine shows up as noise.
   */
  otherLoad: { before: number; during: number; stolenBefore?: number; stolenDuring?: number };
  scenarios: ScenarioResult[];
  sweep: SweepStep[];
  memory: MemoryResult[];
  soak: SoakResult | null;
  statements: StatementsResult[];
  profiles: ProfileResult[];
  targets: TargetCheck[];
  notes: string[];
}

export type { StatementCounts };
