import type { Redis } from 'ioredis';

/** What a breaker holds: consecutive failed calls, and how long it stays open. */
export interface BreakerView {
  failures: number;
  /** Milliseconds left of the cooldown; 0 when not open. */
  openForMs: number;
}

export interface BreakerLimits {
  /** Consecutive failures that open the breaker. */
  threshold: number;
  cooldownMs: number;
}

/**
 * Where breakers live: this process, or Redis (shared by every replica). The failure count is
 * forgotten after a quiet window, so old failures never add up to a cooldown.
 */
export interface BreakerStore {
  read(keys: string[]): Promise<BreakerView[]>;
  fail(key: string, limits: BreakerLimits): Promise<BreakerView>;
  succeed(key: string): Promise<void>;
  /** The one probe of a half-open breaker: true for the caller that may send it. */
  claimProbe(key: string, ttlMs: number): Promise<boolean>;
}

/** Failures older than this (without a newer one) no longer count. */
export function failureWindowMs(limits: BreakerLimits): number {
  return Math.max(60_000, limits.cooldownMs * 2);
}

interface LocalBreaker {
  failures: number;
  forgetAt: number;
  openUntil: number;
  probeUntil: number;
}

export class MemoryBreakerStore implements BreakerStore {
  private readonly breakers = new Map<string, LocalBreaker>();

  read(keys: string[]): Promise<BreakerView[]> {
    const now = Date.now();
    return Promise.resolve(keys.map((key) => this.view(this.live(key, now), now)));
  }

  fail(key: string, limits: BreakerLimits): Promise<BreakerView> {
    const now = Date.now();
    const breaker = this.live(key, now) ?? { failures: 0, forgetAt: 0, openUntil: 0, probeUntil: 0 };
    breaker.failures += 1;
    breaker.forgetAt = now + failureWindowMs(limits);
    if (breaker.failures >= limits.threshold) {
      breaker.openUntil = now + limits.cooldownMs;
      breaker.probeUntil = 0;
    }
    if (this.breakers.size > 10_000) this.breakers.clear();
    this.breakers.set(key, breaker);
    return Promise.resolve(this.view(breaker, now));
  }

  succeed(key: string): Promise<void> {
    this.breakers.delete(key);
    return Promise.resolve();
  }

  claimProbe(key: string, ttlMs: number): Promise<boolean> {
    const now = Date.now();
    const breaker = this.live(key, now);
    if (!breaker || breaker.probeUntil > now) return Promise.resolve(!breaker);
    breaker.probeUntil = now + ttlMs;
    return Promise.resolve(true);
  }

  private live(key: string, now: number): LocalBreaker | undefined {
    const breaker = this.breakers.get(key);
    if (breaker && breaker.forgetAt <= now) {
      this.breakers.delete(key);
      return undefined;
    }
    return breaker;
  }

  private view(breaker: LocalBreaker | undefined, now: number): BreakerView {
    if (!breaker) return { failures: 0, openForMs: 0 };
    return { failures: breaker.failures, openForMs: Math.max(0, breaker.openUntil - now) };
  }
}

/** Counts a failure and opens the breaker at the threshold, atomically for every replica. */
const FAIL_SCRIPT = `
local failures = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if failures >= tonumber(ARGV[1]) then
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[2])
  redis.call('DEL', KEYS[3])
end
return {failures, redis.call('PTTL', KEYS[2])}
`;

/** Three keys per breaker: `:f` the failure count, `:o` open (its TTL is the cooldown), `:p` the probe. */
export class RedisBreakerStore implements BreakerStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  async read(keys: string[]): Promise<BreakerView[]> {
    const pipeline = this.redis.pipeline();
    for (const key of keys) pipeline.get(`${this.prefix}${key}:f`).pttl(`${this.prefix}${key}:o`);
    const results = (await pipeline.exec()) ?? [];
    for (const [error] of results) if (error) throw error;
    return keys.map((_, index) => ({
      failures: Number(results[index * 2][1] ?? 0),
      openForMs: Math.max(0, Number(results[index * 2 + 1][1])),
    }));
  }

  async fail(key: string, limits: BreakerLimits): Promise<BreakerView> {
    const k = `${this.prefix}${key}`;
    const [failures, ttl] = (await this.redis.eval(
      FAIL_SCRIPT,
      3,
      `${k}:f`,
      `${k}:o`,
      `${k}:p`,
      limits.threshold,
      limits.cooldownMs,
      failureWindowMs(limits),
    )) as [number, number];
    return { failures, openForMs: Math.max(0, ttl) };
  }

  async succeed(key: string): Promise<void> {
    const k = `${this.prefix}${key}`;
    await this.redis.del(`${k}:f`, `${k}:o`, `${k}:p`);
  }

  async claimProbe(key: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(`${this.prefix}${key}:p`, '1', 'PX', ttlMs, 'NX')) === 'OK';
  }
}
