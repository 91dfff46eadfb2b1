import { jest } from '@jest/globals';
import type { AppConfig } from '../../config/app-config.js';
import { SchemaReadiness } from '../../database/schema-readiness.js';
import type { Metrics } from '../../metrics/metrics.service.js';
import type { TurnLedger } from '../store/turn-ledger.repository.js';
import { TurnLeases } from './turn-leases.service.js';

const config = {
  durableTurns: { leaseMs: 2000, renewMs: 100, sweepMs: 200, eventRetentionMs: 3_600_000 },
} as unknown as AppConfig;

function leasesWith(
  ledger: Partial<TurnLedger>,
  metrics: Partial<Metrics> = {},
  readiness = new SchemaReadiness(),
) {
  return new TurnLeases(ledger as TurnLedger, metrics as Metrics, readiness, config);
}

describe('TurnLeases', () => {
  it('renews every held turn in one call, and aborts those the database no longer gives it', async () => {
    const calls: string[][] = [];
    const leases = leasesWith({
      renewLeases: (_owner: string, ids: string[]) => {
        calls.push(ids);
        return Promise.resolve(new Set(['kept']));
      },
    });
    const kept = leases.hold('kept');
    const taken = leases.hold('taken');
    await leases.renew();
    expect(calls).toEqual([['kept', 'taken']]);
    expect(kept.lost.aborted).toBe(false);
    expect(taken.lost.aborted).toBe(true);

    kept.release();
    taken.release();
    await leases.renew();
    expect(calls).toHaveLength(1);
  });

  it('aborts nothing when the database cannot be reached', async () => {
    const leases = leasesWith({ renewLeases: () => Promise.reject(new Error('connection refused')) });
    const held = leases.hold('r1');
    await leases.renew();
    expect(held.lost.aborted).toBe(false);
  });

  it('counts the turns its sweep marked failed, with the interrupted error', async () => {
    const counted: number[] = [];
    let stored: unknown;
    const leases = leasesWith(
      {
        failExpired: (error) => {
          stored = error;
          return Promise.resolve(2);
        },
        deleteExpiredEvents: () => Promise.resolve(0),
      },
      { leaseExpired: (count: number) => counted.push(count) },
    );
    await leases.sweep();
    expect(counted).toEqual([2]);
    expect(stored).toMatchObject({ type: 'server_error', code: 'response_interrupted' });
  });

  it('aborts a held turn at once when asked on this replica', () => {
    const leases = leasesWith({});
    const held = leases.hold('r1');
    expect(leases.abortLocal('r1')).toBe(true);
    expect(held.lost.aborted).toBe(true);
    expect(leases.abortLocal('elsewhere')).toBe(false);
  });
});

describe('TurnLeases timers', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  /** A replica's leases whose sweeps are counted; its timers are jest's. */
  function sweptLeases() {
    const readiness = new SchemaReadiness();
    const counted = { sweeps: 0 };
    const leases = leasesWith(
      {
        failExpired: () => {
          counted.sweeps += 1;
          return Promise.resolve(0);
        },
        deleteExpiredEvents: () => Promise.resolve(0),
      },
      {},
      readiness,
    );
    return { leases, readiness, counted };
  }

  it('sweeps only once the boot has migrated the schema', async () => {
    const { leases, readiness, counted } = sweptLeases();
    leases.onApplicationBootstrap();
    jest.advanceTimersByTime(1000);
    expect(counted.sweeps).toBe(0);

    readiness.markMigrated();
    readiness.markReady();
    await readiness.ready;
    jest.advanceTimersByTime(config.durableTurns.sweepMs);
    expect(counted.sweeps).toBe(1);
    await leases.onModuleDestroy();
    jest.advanceTimersByTime(1000);
    expect(counted.sweeps).toBe(1);
  });

  it('never starts when the app closes before its boot was ready', async () => {
    const { leases, readiness, counted } = sweptLeases();
    leases.onApplicationBootstrap();
    await leases.onModuleDestroy();
    readiness.markReady();
    await readiness.ready;
    jest.advanceTimersByTime(1000);
    expect(counted.sweeps).toBe(0);
    expect(jest.getTimerCount()).toBe(0);
  });
});
