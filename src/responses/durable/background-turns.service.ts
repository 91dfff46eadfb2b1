import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { describeUnexpected } from '../../common/errors/all-exceptions.filter.js';
import { ApiError } from '../../common/errors/error-catalogue.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { LifecycleState } from '../../lifecycle/lifecycle.state.js';
import { Metrics } from '../../metrics/metrics.service.js';
import { TurnLedger } from '../store/turn-ledger.repository.js';
import { LiveTurn } from './live-turn.js';
import { TurnLeases } from './turn-leases.service.js';

/** Runs one background turn; `lost` aborts when it was cancelled or taken from this replica. */
export type BackgroundWork = (live: LiveTurn, signal: AbortSignal, lost: AbortSignal) => Promise<void>;

/**
 * The background turns of this replica: at most BACKGROUND_MAX_RUNNING at once, the others wait
 * (status `queued`). Each holds its lease while queued or running. They count as requests in
 * flight for the shutdown sequence, so a leaving replica finishes them within its grace period;
 * the grace deadline cuts the rest, which are stored `failed` with a retryable error.
 */
@Injectable()
export class BackgroundTurns implements OnModuleDestroy {
  private readonly live = new Map<string, { turn: LiveTurn; done: Promise<void>; began: () => void }>();
  private readonly waiting: (() => void)[] = [];
  private running = 0;
  private readonly logger = new Logger('BackgroundTurns');
  private readonly settings: AppConfig['durableTurns'];

  constructor(
    private readonly ledger: TurnLedger,
    private readonly leases: TurnLeases,
    private readonly lifecycle: LifecycleState,
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.settings = config.durableTurns;
  }

  /**
   * Runs `work` with a signal that aborts when the lease is lost or the grace period ends. Not
   * AbortSignal.any: on Node 20 each composite leaves a WeakRef in the drain deadline's dependants
   * for the life of the process (~60 B per turn; the whole turn while a listener stays attached).
   */
  private async runStoppable(turn: LiveTurn, lost: AbortSignal, work: BackgroundWork): Promise<void> {
    const stop = new AbortController();
    const abortFrom = (event: Event) => stop.abort((event.target as AbortSignal).reason);
    const sources = [lost, this.lifecycle.drainDeadline];
    const already = sources.find((source) => source.aborted);
    if (already) stop.abort(already.reason);
    else for (const source of sources) source.addEventListener('abort', abortFrom, { once: true });
    try {
      await work(turn, stop.signal, lost);
    } finally {
      for (const source of sources) source.removeEventListener('abort', abortFrom);
    }
  }

  /** Refuses a new background turn when this replica's queue is full (before anything is stored). */
  checkRoom(): void {
    if (
      this.running >= this.settings.maxRunningBackground &&
      this.waiting.length >= this.settings.maxQueuedBackground
    ) {
      throw new ApiError(
        'service_overloaded',
        'Too many background responses are waiting on this instance; retry later',
        {
          'Retry-After': '1',
        },
      );
    }
  }

  /** Starts `work` now, or once a running turn of this replica ends. */
  start(responseId: string, work: BackgroundWork): LiveTurn {
    const turn = new LiveTurn(responseId, this.ledger, this.settings.eventFlushMs, this.logger);
    const lease = this.leases.hold(responseId);
    this.lifecycle.requestStarted();
    let began!: () => void;
    const admitted = new Promise<void>((resolve) => (began = resolve));
    const done = admitted.then(async () => {
      this.running += 1;
      this.report();
      try {
        if (lease.lost.aborted) return;
        await this.ledger.markRunning(responseId);
        await this.runStoppable(turn, lease.lost, work);
      } catch (error) {
        this.logger.error({ ...describeUnexpected(error), msg: 'a background turn failed to end cleanly' });
      } finally {
        this.running -= 1;
        lease.release();
        turn.end();
        this.live.delete(responseId);
        this.lifecycle.requestFinished();
        this.waiting.shift()?.();
        this.report();
      }
    });
    this.live.set(responseId, { turn, done, began });
    if (this.running < this.settings.maxRunningBackground) began();
    else this.waiting.push(began);
    this.report();
    return turn;
  }

  /**
   * The app is closing without the shutdown sequence (which finishes or cuts background turns
   * first): stop what is left without writing, so the other replicas' sweep fails it.
   */
  onModuleDestroy(): void {
    for (const responseId of this.live.keys()) this.leases.abortLocal(responseId);
  }

  find(responseId: string): LiveTurn | undefined {
    return this.live.get(responseId)?.turn;
  }

  /**
   * Stops a turn running here (a cancel that arrived at its owner) and waits until it has stored
   * the events it emitted; false when the turn does not run here.
   */
  async stop(responseId: string): Promise<boolean> {
    const entry = this.live.get(responseId);
    if (!entry) return false;
    this.leases.abortLocal(responseId);
    // A queued turn has not started: let it through now, it returns at once.
    const index = this.waiting.indexOf(entry.began);
    if (index >= 0) {
      this.waiting.splice(index, 1);
      entry.began();
    }
    await entry.done;
    return true;
  }

  private report(): void {
    this.metrics.backgroundResponses(this.waiting.length, this.running);
  }
}
