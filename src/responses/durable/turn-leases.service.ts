import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { describeUnexpected } from '../../common/errors/all-exceptions.filter.js';
import { ApiError } from '../../common/errors/error-catalogue.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { BackgroundWorker } from '../../database/background-worker.js';
import { SchemaReadiness } from '../../database/schema-readiness.js';
import { Metrics } from '../../metrics/metrics.service.js';
import { TurnLedger } from '../store/turn-ledger.repository.js';

/** The error a turn gets when its replica stopped renewing its lease. */
export function interruptedError(): ApiError {
  return new ApiError(
    'response_interrupted',
    'The service instance running this response stopped before it finished; send the request again',
  );
}

/**
 * This replica's running turns and their leases. Every TURN_LEASE_RENEW_MS one statement renews
 * the leases of all of them; a turn missing from its answer was cancelled (or swept while this
 * replica stalled) and is aborted here. Every TURN_SWEEP_MS the replica also marks failed the
 * turns of any replica whose lease lapsed, and deletes events past their retention. Both timers
 * start once the boot has migrated the schema (SchemaReadiness).
 */
@Injectable()
export class TurnLeases extends BackgroundWorker<AppConfig['durableTurns']> implements OnModuleDestroy {
  /** Unique per process: a restarted replica never renews its predecessor's turns. */
  readonly ownerId = `${hostname().slice(0, 40)}-${process.pid}-${randomBytes(4).toString('hex')}`;
  private readonly held = new Map<string, AbortController>();

  constructor(
    private readonly ledger: TurnLedger,
    private readonly metrics: Metrics,
    readiness: SchemaReadiness,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    super('TurnLeases', readiness, config.durableTurns);
  }

  get leaseMs(): number {
    return this.settings.leaseMs;
  }

  protected start(): void {
    this.timers.every(this.settings.renewMs, () => this.renew());
    this.timers.every(this.settings.sweepMs, () => this.sweep());
  }

  async onModuleDestroy(): Promise<void> {
    this.timers.stop();
    // A renewal or sweep still running finishes before the pool closes.
    await this.timers.idle();
  }

  /** Holds a turn's lease until `release`; the signal aborts if the turn is taken from this replica. */
  hold(responseId: string): { lost: AbortSignal; release(): void } {
    const controller = new AbortController();
    this.held.set(responseId, controller);
    return { lost: controller.signal, release: () => this.held.delete(responseId) };
  }

  /** Aborts a turn of this replica at once (a cancel that arrived here). */
  abortLocal(responseId: string): boolean {
    const controller = this.held.get(responseId);
    controller?.abort();
    return controller !== undefined;
  }

  async renew(): Promise<void> {
    if (this.held.size === 0) return;
    const ids = [...this.held.keys()];
    try {
      const running = await this.ledger.renewLeases(this.ownerId, ids, this.settings.leaseMs);
      for (const id of ids) if (!running.has(id)) this.held.get(id)?.abort();
    } catch (error) {
      // The database is unreachable: nothing is known, so nothing is aborted.
      this.logger.warn({ ...describeUnexpected(error), msg: 'could not renew turn leases' });
    }
  }

  async sweep(): Promise<void> {
    try {
      const expired = await this.ledger.failExpired(interruptedError().toBody().error);
      if (expired > 0) {
        this.metrics.leaseExpired(expired);
        this.logger.warn({ msg: 'marked turns of a lost replica failed', count: expired });
      }
      await this.ledger.deleteExpiredEvents(this.settings.eventRetentionMs);
    } catch (error) {
      this.logger.warn({ ...describeUnexpected(error), msg: 'could not sweep expired turns' });
    }
  }
}
