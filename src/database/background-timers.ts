import type { SchemaReadiness } from './schema-readiness.js';

/**
 * The periodic work of one background worker (usage flushes, turn leases, file ingestion). It
 * starts once the schema is ready (SchemaReadiness: not in onApplicationBootstrap, which runs
 * before create-app migrates) and never after the worker stopped, even when the stop came while
 * the start was still waiting or running. The timers are unref'd: they never keep a process alive.
 */
export class BackgroundTimers {
  private readonly timers: NodeJS.Timeout[] = [];
  private halted = false;

  /** True once `stop` ran: the worker's loops check it to end early. */
  get stopped(): boolean {
    return this.halted;
  }

  /** Runs `start` once the schema is ready, unless the worker stopped by then. */
  startWhenReady(readiness: SchemaReadiness, start: () => void | Promise<void>): void {
    void readiness.ready.then(() => (this.halted ? undefined : start()));
  }

  /** Runs `tick` every `ms` until `stop`; nothing if the worker already stopped. */
  every(ms: number, tick: () => unknown): void {
    if (this.halted) return;
    this.timers.push(setInterval(() => void tick(), ms).unref());
  }

  stop(): void {
    this.halted = true;
    for (const timer of this.timers) clearInterval(timer);
    this.timers.length = 0;
  }
}
