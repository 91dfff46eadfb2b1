import { randomUUID } from 'node:crypto';
import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { RedisBusyStore } from './busy-store.js';
import { UpstreamRedis } from './upstream-redis.js';

/**
 * A replica's counts in Redis lapse this long after its last write unless it renews them: a
 * replica that crashed steers no traffic away from a target for longer (docs/resilience.md).
 */
export const BUSY_LEASE_MS = 5_000;
/**
 * While it runs calls, a replica rewrites its counts this often (a heartbeat: one pipelined
 * write per second per replica, whatever its number of calls), so a live one never lapses
 * unless its event loop stalls for most of a lease; the next heartbeat then writes it back.
 */
export const BUSY_RENEW_MS = 1_000;

/**
 * The model calls running per upstream target, for `failover.balance: least-busy`
 * (docs/resilience.md#fallback-targets); only the calls of least-busy assistants are counted.
 * This replica's counts are kept in process; with REDIS_URL they are also written to Redis (the
 * same connection as the circuit breakers), under a short lease renewed every BUSY_RENEW_MS while
 * they are not zero, and a least-busy order reads every replica's counts summed. A replica that
 * crashed stops renewing and its counts lapse within the lease; while Redis is away each replica
 * orders by its own counts. The writes are not awaited: they add no round trip to a call.
 */
@Injectable()
export class UpstreamLoad implements OnApplicationShutdown {
  private readonly running = new Map<string, number>();
  private readonly replica = randomUUID();
  private shared: { redis: Redis; store: RedisBusyStore } | undefined;
  private renewal: NodeJS.Timeout | undefined;

  constructor(private readonly redis: UpstreamRedis) {}

  /** The calls running on each target (by breaker key): every replica's with Redis, else this one's. */
  counts(keys: string[]): Promise<number[]> {
    const local = () => Promise.resolve(keys.map((key) => this.running.get(key) ?? 0));
    if (keys.length === 0) return local();
    return this.redis.use((redis) => this.store(redis).read(keys), local);
  }

  /** A call starts on the target `key`; the function returned ends it (call it once). */
  started(key: string): () => void {
    this.change(key, 1);
    return () => this.change(key, -1);
  }

  onApplicationShutdown(): void {
    clearInterval(this.renewal);
    this.renewal = undefined;
  }

  private change(key: string, delta: number): void {
    const count = (this.running.get(key) ?? 0) + delta;
    if (count > 0) this.running.set(key, count);
    else this.running.delete(key);
    if (!this.redis.connected) return;
    void this.publish([[key, Math.max(0, count)]]);
    if (!this.renewal) {
      this.renewal = setInterval(() => this.renew(), BUSY_RENEW_MS);
      this.renewal.unref();
    }
  }

  /** Writes this replica's counts again, with a fresh lease; stops when none are left. */
  private renew(): void {
    if (this.running.size === 0) {
      clearInterval(this.renewal);
      this.renewal = undefined;
      return;
    }
    void this.publish([...this.running]);
  }

  private publish(counts: [string, number][]): Promise<void> {
    return this.redis.use(
      (redis) => this.store(redis).write(counts),
      () => Promise.resolve(),
    );
  }

  private store(redis: Redis): RedisBusyStore {
    if (this.shared?.redis !== redis) {
      const store = new RedisBusyStore(redis, `${this.redis.prefix}:busy:`, this.replica, BUSY_LEASE_MS);
      this.shared = { redis, store };
    }
    return this.shared.store;
  }
}
