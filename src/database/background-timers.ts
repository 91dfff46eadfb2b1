import type { SchemaReadiness } from './schema-readiness.js';

/**
 * The periodic work of one background worker (usage flushes, turn leases, file ingestion). It
 * starts once the schema is ready (SchemaReadiness: not in onApplicationBootstrap, which runs
 * before create-app migrates) and never after the worker stopped, even when the stop came while
 * the start was still waiting or running. The timers are unref'd: they never keep a process alive.
 */
export class BackgroundTimers {
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Ticks still running: `idle` waits for them. */
  private readonly running = new Set<Promise<void>>();
  private halted = false;

  /** True once `stop` ran: the worker's loops check it to end early. */
  get stopped(): boolean {
    return this.halted;
  }

  /** Runs `start` once the schema is ready, unless the worker stopped by then; `idle` waits for it too. */
  startWhenReady(readiness: SchemaReadiness, start: () => void | Promise<void>): void {
    void readiness.ready.then(() => {
      if (!this.halted) this.track(start());
    });
  }

  /** Runs `tick` every `ms` until `stop`; nothing if the worker already stopped. */
  every(ms: number, tick: () => unknown): void {
    if (this.halted) return;
    this.timers.add(setInterval(() => this.track(tick()), ms).unref());
  }

  /**
   * Runs `tick` once after `ms`, unless the worker stops first: for a worker that times each next
   * tick itself (IngestionWorker's backoff). Answers a function that cancels it.
   */
  after(ms: number, tick: () => unknown): () => void {
    if (this.halted) return () => undefined;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.track(tick());
    }, ms).unref();
    this.timers.add(timer);
    return () => {
      clearTimeout(timer);
      this.timers.delete(timer);
    };
  }

  /**
   * Resolves once the ticks running now have ended: a worker's shutdown hook waits for them after
   * `stop`, so that none is cut by the pool closing (and logs a failure on a clean shutdown).
   */
  async idle(): Promise<void> {
    await Promise.all(this.running);
  }

  private track(result: unknown): void {
    if (!(result instanceof Promise)) return;
    // Each tick handles (and logs) its own failure; here only its end matters.
    const ended: Promise<void> = result.then(
      () => undefined,
      () => undefined,
    );
    this.running.add(ended);
    void ended.then(() => this.running.delete(ended));
  }

  stop(): void {
    this.halted = true;
    // clearTimeout clears an interval too.
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }
}
