import { BeforeApplicationShutdown, Inject, Injectable } from '@nestjs/common';
import { describeUnexpected } from '../common/errors/all-exceptions.filter.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { BackgroundWorker } from '../database/background-worker.js';
import { SchemaReadiness } from '../database/schema-readiness.js';
import { UsageRollups } from './usage-rollups.repository.js';

/** Ids kept for the next flush at most; beyond (a long outage), the orphan pass adds the rest. */
const MAX_BATCH = 100_000;
/** Turns one orphan pass adds per statement. */
const ORPHAN_BATCH = 5000;

/**
 * Usage rolled up off the turn's transaction. Each stored turn leaves a `usage_pending` row in its
 * own statement; this replica remembers the ids of its turns and, every USAGE_FLUSH_MS, adds them
 * to `usage_daily` and `usage_hourly` in one statement that deletes the rows it adds, so that
 * concurrent turns no longer wait on one another's rollup row. Rows a replica left behind (it died
 * before its flush) are added by any replica once older than USAGE_ORPHAN_AFTER_MS, at boot and
 * periodically. Flushes run one at a time; a failed one keeps its ids for the next.
 */
@Injectable()
export class UsageFlusher extends BackgroundWorker<AppConfig['usage']> implements BeforeApplicationShutdown {
  private batch = new Set<string>();
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly rollups: UsageRollups,
    readiness: SchemaReadiness,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    super('UsageFlusher', readiness, config.usage);
  }

  /**
   * Once the schema is migrated (docs/architecture.md, "Boot order"): a restart counts what its
   * predecessor left at once (if old enough), before its timers start.
   */
  protected async start(): Promise<void> {
    await this.addOrphans();
    // `every` starts nothing once the shutdown began during that pass.
    this.timers.every(this.settings.flushMs, () => this.flush());
    const orphanEveryMs = Math.max(this.settings.flushMs, Math.floor(this.settings.orphanAfterMs / 2));
    this.timers.every(orphanEveryMs, () => this.addOrphans());
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.timers.stop();
    // An orphan pass still running finishes before the pool closes (the flushes run in turn).
    await Promise.all([this.timers.idle(), this.flush()]);
  }

  /** A turn of this replica whose usage the turn's statement left pending. */
  add(responseId: string): void {
    if (this.batch.size < MAX_BATCH) this.batch.add(responseId);
  }

  /**
   * Adds every turn this replica recorded so far to the rollups; resolves when they are in (or
   * the flush failed, logged: they stay pending). The readers need none: they read pending usage too.
   */
  flush(): Promise<void> {
    this.running = this.running.then(() => this.flushBatch());
    return this.running;
  }

  private async flushBatch(): Promise<void> {
    if (this.batch.size === 0) return;
    const ids = [...this.batch];
    this.batch = new Set();
    try {
      await this.rollups.flush(ids);
    } catch (error) {
      for (const id of ids) this.add(id);
      this.logger.warn({ ...describeUnexpected(error), msg: 'could not add usage to the rollups' });
    }
  }

  /** Adds the usage other (dead) replicas left pending, in bounded statements. */
  private async addOrphans(): Promise<void> {
    const cutoff = new Date(Date.now() - this.settings.orphanAfterMs);
    try {
      let added = 0;
      // A backlog is drained batch by batch; a shutdown ends the pass between batches.
      for (let turns = ORPHAN_BATCH; turns === ORPHAN_BATCH && !this.timers.stopped; added += turns) {
        turns = await this.rollups.flushOrphans(cutoff, ORPHAN_BATCH);
      }
      if (added > 0) this.logger.log({ msg: 'added usage a stopped replica left pending', turns: added });
    } catch (error) {
      this.logger.warn({ ...describeUnexpected(error), msg: 'could not add pending usage' });
    }
  }
}
