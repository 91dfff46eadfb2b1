import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createHistogram, performance } from 'node:perf_hooks';
import type { PoolStats } from './results.js';

/**
 * Part of the loop-monitor preload: wraps node-postgres' pool (`pg-pool`, which TypeORM and the
 * persisting relay both use) so a measurement window also says how long queries waited for a
 * connection and how many queued at once. Nothing in src/ changes; a server without pg (the
 * peer gateway, the bare relay) simply reports nothing.
 */

interface PoolInternals {
  _idle: unknown[];
  _clients: unknown[];
  _pendingQueue: unknown[];
  options: { max: number };
  _isFull(): boolean;
}
type Callback = (error: unknown, client?: unknown, release?: unknown) => void;

export interface PoolMonitor {
  reset(): void;
  read(): PoolStats | null;
}

export function monitorPools(): PoolMonitor | null {
  let Pool: { prototype: { connect(this: PoolInternals, callback?: Callback): unknown } };
  try {
    // Resolved from the working directory, as the service's own require('pg') is.
    Pool = createRequire(join(process.cwd(), 'package.json'))('pg-pool') as typeof Pool;
  } catch {
    return null;
  }
  // Microseconds, so sub-millisecond waits are kept.
  const waits = createHistogram({ lowest: 1, highest: 60_000_000, figures: 3 });
  let acquisitions = 0;
  let waited = 0;
  let maxWaiting = 0;
  let maxOpen = 0;
  // Called with the pool as `this` below, as pg-pool's own callers do.
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const original = Pool.prototype.connect;
  Pool.prototype.connect = function (this: PoolInternals, callback?: Callback) {
    const started = performance.now();
    if (this._idle.length === 0 && this._isFull()) waited++;
    const done = () => {
      acquisitions++;
      waits.record(Math.max(1, Math.round((performance.now() - started) * 1000)));
      maxOpen = Math.max(maxOpen, this._clients.length);
    };
    let result: unknown;
    if (typeof callback === 'function') {
      result = original.call(this, (error, client, release) => {
        done();
        callback(error, client, release);
      });
    } else {
      result = (original.call(this) as Promise<unknown>).then((client) => {
        done();
        return client;
      });
    }
    maxWaiting = Math.max(maxWaiting, this._pendingQueue.length);
    return result;
  };
  return {
    reset() {
      waits.reset();
      acquisitions = waited = maxWaiting = maxOpen = 0;
    },
    read() {
      if (acquisitions === 0) return null;
      return {
        acquisitions,
        waited,
        waitP50Ms: waits.percentile(50) / 1000,
        waitP99Ms: waits.percentile(99) / 1000,
        waitMaxMs: waits.max / 1000,
        maxWaiting,
        maxOpen,
      };
    },
  };
}
