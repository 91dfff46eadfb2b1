import type { Redis } from 'ioredis';

/** A Redis that does not answer within this is treated as down for that one command. */
const REDIS_COMMAND_TIMEOUT_MS = 500;

/**
 * A Redis client for state shared by replicas (rate limits, upstream breakers), not yet
 * connected: the caller builds its store on it, then calls `connectSharedRedis`. It fails fast
 * instead of queueing behind a dead connection (ioredis keeps reconnecting), so the caller can
 * fall back to its in-process state; every connection error goes to `onError`.
 */
export async function createSharedRedis(url: string, onError: (error: unknown) => void): Promise<Redis> {
  // ioredis is loaded only by deployments that configure Redis (~2 MiB of heap otherwise idle).
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: 5000,
  });
  redis.on('error', (error: unknown) => onError(error));
  return redis;
}

/** Connects; a failure was already reported to `onError`, and the state stays in process until it is back. */
export async function connectSharedRedis(redis: Redis): Promise<void> {
  try {
    await redis.connect();
  } catch {
    // Reported by the 'error' listener.
  }
}

/** Closes the client at shutdown: politely when it is connected, at once otherwise. */
export async function closeSharedRedis(redis: Redis | undefined): Promise<void> {
  if (!redis) return;
  if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
  else redis.disconnect();
}
