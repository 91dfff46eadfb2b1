import { createHash } from 'node:crypto';
import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterRes } from 'rate-limiter-flexible';
import { ApiError } from '../common/errors/error-catalogue.js';
import { closeSharedRedis, connectSharedRedis, createSharedRedis } from '../common/redis/shared-redis.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { Metrics } from '../metrics/metrics.service.js';
import { RateLimitsRepository } from './rate-limits.repository.js';

const WINDOW_SECONDS = 60;
const STORE_WARNING_INTERVAL_MS = 30_000;
/**
 * The library counts and expires windows; the comparison with each organization's own limit is
 * done here, so one counter serves every limit and a changed limit keeps the window's count.
 */
const UNBOUNDED = Number.MAX_SAFE_INTEGER;

interface CachedLimit {
  limit: Promise<number>;
  expiresAt: number;
}

/**
 * Requests per minute per organization: the administrator's `rate_limit_per_minute`, else
 * RATE_LIMIT_DEFAULT_PER_MINUTE (0 = unlimited). With REDIS_URL the counters live in Redis, so
 * the limit holds across all replicas together; without it they live in this process.
 *
 * Windows are fixed minutes starting at an organization's first request (rate-limiter-flexible's
 * counter with a 60-second expiry). If Redis cannot be reached the request is counted in process
 * instead (each replica then enforces the limit on its own) and a warning is logged: an outage of
 * the limiter's store loosens the limit rather than taking the API down.
 */
@Injectable()
export class RateLimitService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('RateLimits');
  private redis: Redis | undefined;
  private shared: RateLimiterRedis | undefined;
  private readonly local = new RateLimiterMemory({
    keyPrefix: 'rl:org',
    points: UNBOUNDED,
    duration: WINDOW_SECONDS,
  });
  private readonly limits = new Map<string, CachedLimit>();
  private lastStoreWarning = 0;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly repository: RateLimitsRepository,
    private readonly metrics: Metrics,
  ) {}

  async onModuleInit(): Promise<void> {
    const { redisUrl, redisKeyPrefix } = this.config.limits;
    if (!redisUrl) return;
    const redis = await createSharedRedis(redisUrl, (error) => this.warnStoreDown(error));
    this.redis = redis;
    this.shared = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${redisKeyPrefix}:rl:org`,
      points: UNBOUNDED,
      duration: WINDOW_SECONDS,
      // Fail over to the in-process count at once instead of waiting on a dead connection.
      rejectIfRedisNotReady: true,
    });
    // Until it connects, requests are counted in process.
    await connectSharedRedis(redis);
  }

  async onApplicationShutdown(): Promise<void> {
    await closeSharedRedis(this.redis);
  }

  /**
   * Counts one request of the organization. Returns the `x-ratelimit-*` headers to send, or
   * throws 429 `rate_limit_exceeded` with `Retry-After` in whole seconds.
   */
  async enforce(organizationId: string): Promise<Record<string, string>> {
    return this.enforceBucket(organizationId, await this.limitFor(organizationId), "This organization's");
  }

  /**
   * Counts one admin API request of a platform administrator (the token's issuer and subject):
   * ADMIN_RATE_LIMIT_PER_MINUTE each. An organization's admin key is counted with `enforce`.
   */
  enforceAdmin(issuer: string, subject: string): Promise<Record<string, string>> {
    const bucket = `admin:${createHash('sha256').update(`${issuer}\n${subject}`).digest('base64url')}`;
    return this.enforceBucket(bucket, this.config.limits.adminPerMinute, "This administrator's");
  }

  private async enforceBucket(bucket: string, limit: number, whose: string): Promise<Record<string, string>> {
    if (limit === 0) return {};
    const counted = await this.count(bucket);
    const allowed = counted.consumedPoints <= limit;
    const resetSeconds = Math.max(1, Math.ceil(counted.msBeforeNext / 1000));
    const headers = {
      'x-ratelimit-limit-requests': String(limit),
      'x-ratelimit-remaining-requests': String(Math.max(0, limit - counted.consumedPoints)),
      'x-ratelimit-reset-requests': `${resetSeconds}s`,
    };
    if (allowed) return headers;
    this.metrics.rateLimitRejected();
    throw new ApiError(
      'rate_limit_exceeded',
      `${whose} limit of ${limit} requests per minute is used up; retry in ${resetSeconds} s`,
      { ...headers, 'Retry-After': String(resetSeconds) },
    );
  }

  /** Counts the request in Redis, or in this process when there is no Redis or it failed. */
  private async count(bucket: string): Promise<RateLimiterRes> {
    if (this.shared) {
      try {
        return await this.shared.consume(bucket);
      } catch (error) {
        this.metrics.rateLimitStoreFailed();
        this.warnStoreDown(error);
      }
    }
    return this.local.consume(bucket);
  }

  /** The organization's limit, remembered for RATE_LIMIT_CACHE_SECONDS; concurrent misses share one query. */
  private limitFor(organizationId: string): Promise<number> {
    const now = Date.now();
    const cached = this.limits.get(organizationId);
    if (cached && cached.expiresAt > now) return cached.limit;
    const limit = this.repository
      .findOrganizationLimit(organizationId)
      .then((own) => own ?? this.config.limits.defaultPerMinute);
    if (this.limits.size >= 10_000) this.limits.clear();
    this.limits.set(organizationId, { limit, expiresAt: now + this.config.limits.organizationCacheTtlMs });
    // A failed lookup is not remembered; the request fails and the next one asks again.
    limit.catch(() => {
      if (this.limits.get(organizationId)?.limit === limit) this.limits.delete(organizationId);
    });
    return limit;
  }

  private warnStoreDown(error: unknown): void {
    const now = Date.now();
    if (now - this.lastStoreWarning < STORE_WARNING_INTERVAL_MS) return;
    this.lastStoreWarning = now;
    // The message names the host and the failure (ECONNREFUSED…), never the URL's credentials.
    this.logger.warn({
      msg: 'Redis unavailable: rate limits are counted per replica until it is back',
      error: errorMessage(error),
    });
  }
}

/** Socket errors may come from another realm (tests), so no `instanceof Error`. */
function errorMessage(error: unknown): string {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message.slice(0, 200) : 'unknown';
}
