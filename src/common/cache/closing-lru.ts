/**
 * Values that hold resources (connection pools), at most `maxEntries` of them by key: making one
 * more closes and drops the least recently used. The keys come from configuration an
 * organization admin writes (base URLs, keys, allowlists), so without a bound each new key would
 * keep a pool for the life of the process.
 */
export class ClosingLru<V> {
  private readonly entries = new Map<string, V>();

  constructor(
    private readonly maxEntries: number,
    private readonly close: (value: V) => void,
  ) {}

  /** The value under `key`, now the most recently used; undefined when there is none. */
  get(key: string): V | undefined {
    const found = this.entries.get(key);
    if (found !== undefined) {
      // Re-inserted, it moves to the end: Maps iterate in insertion order, least recent first.
      this.entries.delete(key);
      this.entries.set(key, found);
    }
    return found;
  }

  /** Keeps `value` under a key that has none, closing the least recently used beyond the bound. */
  add(key: string, value: V): V {
    for (const [oldestKey, oldest] of this.entries) {
      if (this.entries.size < this.maxEntries) break;
      this.entries.delete(oldestKey);
      this.close(oldest);
    }
    this.entries.set(key, value);
    return value;
  }

  values(): IterableIterator<V> {
    return this.entries.values();
  }

  get size(): number {
    return this.entries.size;
  }
}
