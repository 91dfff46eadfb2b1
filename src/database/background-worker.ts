import { Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { BackgroundTimers } from './background-timers.js';
import type { SchemaReadiness } from './schema-readiness.js';

/**
 * A replica's background worker (turn leases, usage flushes, file ingestion): its log context,
 * its part of the configuration, and its periodic work, which `start` sets up on `timers` once
 * the schema is ready and never after the worker stopped (BackgroundTimers). Each worker stops
 * `timers` in its own shutdown hook, with whatever it must finish first.
 */
export abstract class BackgroundWorker<Settings> implements OnApplicationBootstrap {
  protected readonly timers = new BackgroundTimers();
  protected readonly logger: Logger;

  protected constructor(
    context: string,
    private readonly readiness: SchemaReadiness,
    protected readonly settings: Settings,
  ) {
    this.logger = new Logger(context);
  }

  onApplicationBootstrap(): void {
    this.timers.startWhenReady(this.readiness, () => this.start());
  }

  /** Sets up the periodic work (`timers.every`); runs once, when the schema is ready. */
  protected abstract start(): void | Promise<void>;
}
