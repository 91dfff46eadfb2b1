import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { closeSharedRedis, connectSharedRedis, createSharedRedis } from '../common/redis/shared-redis.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';

const WARNING_INTERVAL_MS = 30_000;

/**
 * The Redis client of the upstream state the replicas share (circuit breakers, least-busy
 * counts), when REDIS_URL is set: one connection for both. Without it, or while Redis does not
 * answer, each replica keeps that state in process, as the rate limits do; a Redis outage never
 * fails a model call.
 */
@Injectable()
export class UpstreamRedis implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('UpstreamRedis');
  private redis: Redis | undefined;
  private lastWarning = 0;
  /** Prefix of every key (REDIS_KEY_PREFIX), without its trailing colon. */
  readonly prefix: string;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    this.prefix = config.limits.redisKeyPrefix;
  }

  async onModuleInit(): Promise<void> {
    const { redisUrl } = this.config.limits;
    if (!redisUrl) return;
    this.redis = await createSharedRedis(redisUrl, (error) => this.warn(error));
    // Until it connects, the state is kept in process.
    await connectSharedRedis(this.redis);
  }

  async onApplicationShutdown(): Promise<void> {
    await closeSharedRedis(this.redis);
  }

  /** Runs `shared` on Redis while it is connected and answers, else `local`. */
  async use<T>(shared: (redis: Redis) => Promise<T>, local: () => Promise<T>): Promise<T> {
    if (this.redis?.status === 'ready') {
      try {
        return await shared(this.redis);
      } catch (error) {
        this.warn(error);
      }
    }
    return local();
  }

  /** Whether the state lives in Redis now (REDIS_URL set and connected). */
  get connected(): boolean {
    return this.redis?.status === 'ready';
  }

  private warn(error: unknown): void {
    const now = Date.now();
    if (now - this.lastWarning < WARNING_INTERVAL_MS) return;
    this.lastWarning = now;
    const reason = error instanceof Error ? error.message : 'unknown error';
    this.logger.warn(
      `Redis unreachable for the upstream breakers and load counts (${reason}); each replica keeps its own`,
    );
  }
}
