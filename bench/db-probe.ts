import type { PgCounter, StatementStats } from './pg-counter.js';
import { runMs } from './processes.js';
import type { StatementsResult } from './results.js';
import type { WalMeter, WalUsage } from './wal-meter.js';

/**
 * Database work per turn, counted rather than timed: a number of turns one after another through
 * a counting proxy (statements, round trips, rows per statement), with the WAL the bench database
 * wrote meanwhile (pg_waldump) and the CPU its backends spent (schedstat). On a shared machine
 * the counts and the WAL bytes stand; the CPU and the per-statement times are a loaded machine's.
 */
export interface DatabaseProbe {
  counter: PgCounter;
  wal: WalMeter | null;
  /** The backends serving the probed process, read before and after. */
  backends(): Promise<number[]>;
}

export async function measureTurns(
  probe: DatabaseProbe,
  kind: string,
  arm: 'service' | 'relayPg',
  repetitions: number,
  turn: () => Promise<boolean>,
): Promise<StatementsResult | null> {
  probe.counter.take();
  const cpuBefore = await backendCpu(probe);
  const walStart = await probe.wal?.position();
  let ok = 0;
  for (let index = 0; index < repetitions; index++) if (await turn()) ok++;
  const walEnd = await probe.wal?.position();
  const cpuAfter = await backendCpu(probe);
  const counts = probe.counter.take();
  if (ok === 0) return null;
  let databaseCpuMs: number | null = null;
  if (cpuAfter.size > 0) {
    databaseCpuMs = 0;
    for (const [pid, value] of cpuAfter) databaseCpuMs += value - (cpuBefore.get(pid) ?? 0);
    databaseCpuMs /= ok;
  }
  const wal =
    probe.wal && walStart && walEnd ? perTurnWal(await probe.wal.between(walStart, walEnd), ok) : null;
  const per = (value: number) => value / ok;
  return {
    kind,
    arm,
    turns: ok,
    perTurn: {
      statements: per(counts.statements),
      roundTrips: per(counts.roundTrips),
      byVerb: Object.fromEntries(Object.entries(counts.byVerb).map(([verb, count]) => [verb, per(count)])),
      byStatement: Object.fromEntries(
        Object.entries(counts.byStatement).map(([text, stats]): [string, StatementStats] => [
          text,
          {
            ...stats,
            calls: per(stats.calls),
            rows: per(stats.rows),
            errors: per(stats.errors),
            ms: per(stats.ms),
          },
        ]),
      ),
      wal,
      databaseCpuMs,
    },
  };
}

async function backendCpu(probe: DatabaseProbe): Promise<Map<number, number>> {
  const cpu = new Map<number, number>();
  for (const pid of await probe.backends()) {
    const value = runMs(pid);
    if (value !== null) cpu.set(pid, value);
  }
  return cpu;
}

function perTurnWal(usage: WalUsage, turns: number): WalUsage {
  const scale = <T extends Record<string, number>>(entry: T): T =>
    Object.fromEntries(Object.entries(entry).map(([key, value]) => [key, value / turns])) as T;
  return {
    records: usage.records / turns,
    bytes: usage.bytes / turns,
    fpiBytes: usage.fpiBytes / turns,
    byRelation: Object.fromEntries(
      Object.entries(usage.byRelation).map(([key, value]) => [key, scale(value)]),
    ),
    byRecord: Object.fromEntries(Object.entries(usage.byRecord).map(([key, value]) => [key, scale(value)])),
  };
}
