import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import {
  MemoryBreakerStore,
  RedisBreakerStore,
  type BreakerLimits,
  type BreakerStore,
  type BreakerView,
} from './breaker-store.js';
import { UpstreamRedis } from './upstream-redis.js';

/** Distinct targets remembered with their digests; past this the memory is dropped and refilled. */
const MAX_REMEMBERED_KEYS = 10_000;

export type BreakerState = 'closed' | 'open' | 'half_open';

/** Who a breaker belongs to: an organization's target (model, URL and key name; never the key). */
export interface BreakerTarget {
  scope: string;
  baseUrl: string;
  model: string;
  apiKeyEnv?: string;
  label: string;
}

/** Told every breaker state a replica reads or sets (the /metrics gauge, wired by the metrics module). */
export type BreakerObserver = (scope: string, target: string, state: BreakerState) => void;

export interface BreakerReading {
  key: string;
  state: BreakerState;
  failures: number;
  openForMs: number;
}

/**
 * Circuit breakers of upstream targets (docs/resilience.md): UPSTREAM_BREAKER_FAILURES failed
 * calls in a row open a target's breaker for UPSTREAM_BREAKER_COOLDOWN_MS; then it is half-open
 * and one call probes it (a success closes it, a failure opens it again). With REDIS_URL the
 * breakers live in Redis (UpstreamRedis), shared by every replica; without it (or while Redis is
 * unreachable) each replica keeps its own, as the rate limits do. Kept per organization: one
 * organization's exhausted key never cools down another's target.
 */
@Injectable()
export class UpstreamBreakers {
  private readonly local = new MemoryBreakerStore();
  private readonly keys = new Map<string, string>();
  private shared: { redis: Redis; store: BreakerStore } | undefined;
  private observer: BreakerObserver = () => undefined;
  readonly limits: BreakerLimits;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly redis: UpstreamRedis,
  ) {
    this.limits = {
      threshold: config.upstream.breakerFailures,
      cooldownMs: config.upstream.breakerCooldownMs,
    };
  }

  observe(observer: BreakerObserver): void {
    this.observer = observer;
  }

  get enabled(): boolean {
    return this.limits.threshold > 0;
  }

  /** The breaker key of a target: a digest, so no URL or name is spelled out in Redis. */
  keyOf(target: BreakerTarget): string {
    const name = [target.scope, target.baseUrl, target.model, target.apiKeyEnv ?? ''].join('\u0000');
    // Every turn asks for its targets' keys; the digest is remembered rather than hashed again.
    let key = this.keys.get(name);
    if (key === undefined) {
      key = createHash('sha256').update(name).digest('base64url').slice(0, 32);
      if (this.keys.size >= MAX_REMEMBERED_KEYS) this.keys.clear();
      this.keys.set(name, key);
    }
    return key;
  }

  async read(targets: BreakerTarget[]): Promise<BreakerReading[]> {
    if (!this.enabled || targets.length === 0) {
      return targets.map((target) => ({
        key: this.keyOf(target),
        state: 'closed',
        failures: 0,
        openForMs: 0,
      }));
    }
    const keys = targets.map((target) => this.keyOf(target));
    const views = await this.use((store) => store.read(keys));
    return views.map((view, index) => {
      const reading = { key: keys[index], ...view, state: this.stateOf(view) };
      this.observer(targets[index].scope, targets[index].label, reading.state);
      return reading;
    });
  }

  /** The one probe of a half-open target: whether this call may send it. */
  claimProbe(key: string): Promise<boolean> {
    return this.use((store) => store.claimProbe(key, this.limits.cooldownMs));
  }

  async failed(target: BreakerTarget, key: string): Promise<BreakerState> {
    if (!this.enabled) return 'closed';
    const view = await this.use((store) => store.fail(key, this.limits));
    const state = this.stateOf(view);
    this.observer(target.scope, target.label, state);
    return state;
  }

  async succeeded(target: BreakerTarget, key: string): Promise<void> {
    if (!this.enabled) return;
    await this.use((store) => store.succeed(key));
    this.observer(target.scope, target.label, 'closed');
  }

  private stateOf(view: BreakerView): BreakerState {
    if (view.openForMs > 0) return 'open';
    return view.failures >= this.limits.threshold ? 'half_open' : 'closed';
  }

  /** Redis when it answers, else this replica's own breakers: a Redis outage never fails a call. */
  private use<T>(operation: (store: BreakerStore) => Promise<T>): Promise<T> {
    return this.redis.use(
      (redis) => operation(this.sharedStore(redis)),
      () => operation(this.local),
    );
  }

  private sharedStore(redis: Redis): BreakerStore {
    if (this.shared?.redis !== redis) {
      this.shared = { redis, store: new RedisBreakerStore(redis, `${this.redis.prefix}:brk:`) };
    }
    return this.shared.store;
  }
}
