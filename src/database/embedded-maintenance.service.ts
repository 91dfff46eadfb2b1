import { BeforeApplicationShutdown, Inject, Injectable } from '@nestjs/common';
import { describeUnexpected } from '../common/errors/all-exceptions.filter.js';
import { databaseOutage, isDatabaseUnavailable } from '../common/errors/database-outage.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { LifecycleState } from '../lifecycle/lifecycle.state.js';
import { BackgroundWorker } from './background-worker.js';
import { SchemaReadiness } from './schema-readiness.js';
import { TableMaintenance } from './table-maintenance.repository.js';

/**
 * Autovacuum for the embedded database, which has none (PGlite is single-user PostgreSQL): every
 * EMBEDDED_MAINTENANCE_SECONDS, the tables whose changes passed autovacuum's default thresholds
 * get a VACUUM (ANALYZE) or an ANALYZE, so that the prepared statements are planned on real
 * statistics and the space of updated and deleted rows is reused instead of growing the data
 * directory. PGlite runs one statement at a time, so a pass holds every request behind the
 * table it is on: it goes table by table, only when due, never two at once, and not once the
 * replica is shutting down. Registered only on the embedded database (see DatabaseModule).
 */
@Injectable()
export class EmbeddedMaintenance
  extends BackgroundWorker<AppConfig['database']>
  implements BeforeApplicationShutdown
{
  private running = false;

  constructor(
    private readonly tables: TableMaintenance,
    private readonly lifecycle: LifecycleState,
    readiness: SchemaReadiness,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    super('EmbeddedMaintenance', readiness, config.database);
  }

  protected start(): void {
    if (this.settings.embeddedMaintenanceMs > 0) {
      this.timers.every(this.settings.embeddedMaintenanceMs, () => this.pass());
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.timers.stop();
    // The table being maintained finishes before the pool closes; the pass stops after it.
    await this.timers.idle();
  }

  /** One pass over the tables that are due; nothing while another runs or the replica stops. */
  async pass(): Promise<void> {
    // An outage is logged once by its tracker and ended by its probe; a pass waits for that.
    if (this.running || this.lifecycle.shuttingDown || databaseOutage.down) return;
    this.running = true;
    let table: string | undefined;
    try {
      for (const due of await this.tables.dueTables()) {
        if (this.timers.stopped || this.lifecycle.shuttingDown) return;
        table = due.table;
        const started = performance.now();
        await this.tables.maintain(due);
        this.logger.debug({
          msg: due.vacuum ? 'vacuumed and analyzed a table' : 'analyzed a table',
          table,
          ms: Math.round(performance.now() - started),
        });
      }
    } catch (error) {
      // The next pass tries again: a table still due is still listed.
      if (isDatabaseUnavailable(error)) databaseOutage.failed(error);
      else
        this.logger.warn({
          ...describeUnexpected(error),
          msg: 'embedded database maintenance failed',
          table,
        });
    } finally {
      this.running = false;
    }
  }
}
