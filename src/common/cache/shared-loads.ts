/**
 * One load per key at a time for a cache in front of the database: callers that miss while a
 * load of their key runs wait for it instead of sending the same query. Without it, every
 * request that arrives while an expired entry is reloaded queries too: at 32 clients, each 5-s
 * expiry of the key, assistant, organization and roster caches sent about ten queries each
 * (0.05 statements per turn on top of the turn's one).
 *
 * `forget` is the cache's invalidation: a load already running when its key is forgotten still
 * answers the callers that joined it (their read began before the change, as without sharing),
 * but its result is not kept, and the next miss starts a new load.
 */
export class SharedLoads<V> {
  private readonly pending = new Map<string, { loading: Promise<V>; startedAt: number }>();

  /**
   * `joinWithinMs`: a load older than this is not joined, and a new one replaces it. A query on a
   * connection that died silently may never answer; without the bound, every later miss of its
   * key would wait on it too, instead of on a connection of its own.
   */
  constructor(private readonly joinWithinMs = 2_000) {}

  /** Runs `load` unless one for `key` is running; `keep` stores its result unless `key` was forgotten meanwhile. */
  run(key: string, load: () => Promise<V>, keep: (value: V) => void): Promise<V> {
    const now = Date.now();
    const running = this.pending.get(key);
    if (running && now - running.startedAt < this.joinWithinMs) return running.loading;
    const loading: Promise<V> = load().then(
      (value) => {
        if (this.pending.get(key)?.loading === loading) {
          this.pending.delete(key);
          keep(value);
        }
        return value;
      },
      (error: unknown) => {
        if (this.pending.get(key)?.loading === loading) this.pending.delete(key);
        throw error;
      },
    );
    this.pending.set(key, { loading, startedAt: now });
    return loading;
  }

  forget(key: string): void {
    this.pending.delete(key);
  }

  forgetAll(): void {
    this.pending.clear();
  }
}
