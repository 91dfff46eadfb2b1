import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { describeUnexpected } from '../../common/errors/all-exceptions.filter.js';
import { AbortOnAny } from '../../common/runtime/abort-on-any.js';
import { ApiError } from '../../common/errors/error-catalogue.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { LifecycleState } from '../../lifecycle/lifecycle.state.js';
import { InFlightLimiter } from '../../limits/in-flight-limiter.service.js';
import { Metrics } from '../../metrics/metrics.service.js';
import { TurnLedger } from '../store/turn-ledger.repository.js';
import { BackgroundAdmission } from './background-admission.js';
import { LiveTurn } from './live-turn.js';
import { TurnLeases } from './turn-leases.service.js';

/** How long closing the app waits for stopped background turns to store what they emitted. */
const STOP_WAIT_MS = 5000;

/** Runs one background turn; `lost` aborts when it was cancelled or taken from this replica. */
export type BackgroundWork = (live: LiveTurn, signal: AbortSignal, lost: AbortSignal) => Promise<void>;

/**
 * The background turns of this replica, run as BackgroundAdmission lets them (its slots, queue and
 * organizations' shares). A running turn holds a slot of the in-flight cap
 * (MAX_IN_FLIGHT_RESPONSES, and its organization's share of it). Each holds its lease while queued
 * or running. They count as requests in flight for the shutdown sequence, so a leaving replica
 * finishes them within its grace period; the grace deadline cuts the rest, which are stored
 * `failed` with a retryable error. A closing app takes no new one (503 `service_unavailable`).
 */
@Injectable()
export class BackgroundTurns implements OnModuleDestroy {
  private readonly live = new Map<string, { turn: LiveTurn; done: Promise<void>; began: () => void }>();
  private readonly admission: BackgroundAdmission;
  /** Set when the app closes: no new background turn is taken from then on. */
  private closing = false;
  private readonly logger = new Logger('BackgroundTurns');
  private readonly settings: AppConfig['durableTurns'];

  constructor(
    private readonly ledger: TurnLedger,
    private readonly leases: TurnLeases,
    private readonly lifecycle: LifecycleState,
    metrics: Metrics,
    private readonly inFlight: InFlightLimiter,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.settings = config.durableTurns;
    this.admission = new BackgroundAdmission(config.durableTurns, metrics);
  }

  /**
   * Runs `work` with a signal that aborts when the lease is lost or the grace period ends. Not
   * AbortSignal.any (see AbortOnAny): on Node 20 each composite leaves a WeakRef in the drain
   * deadline's dependants for the life of the process (~60 B per turn).
   */
  private async runStoppable(turn: LiveTurn, lost: AbortSignal, work: BackgroundWork): Promise<void> {
    const stop = new AbortOnAny([lost, this.lifecycle.drainDeadline]);
    try {
      await work(turn, stop.signal, lost);
    } finally {
      stop.release();
    }
  }

  /**
   * Refuses a new turn when the app is closing (503 `service_unavailable`, Retry-After: 1: another
   * replica takes it), or as BackgroundAdmission.reserve does; otherwise true when it can start at
   * once, its running slot then held for it from now (pass `true` to `start`, or call `unreserve`
   * if its start row could not be written), so it is recorded running and needs no claim. False:
   * it will wait.
   */
  reserve(organizationId: string): boolean {
    if (this.closing) {
      throw new ApiError('service_unavailable', 'This instance is shutting down; retry shortly', {
        'Retry-After': '1',
      });
    }
    return this.admission.reserve(organizationId);
  }

  /** Gives back the slot `reserve` held for a turn that will not start. */
  unreserve(organizationId: string): void {
    this.admission.finished(organizationId);
  }

  /**
   * Starts `work`: at once when `reserved` (its slot held by `reserve`, its row recorded
   * `in_progress`); otherwise its row says `queued`, and it starts now or once a running turn of
   * this replica ends and it can start (BackgroundAdmission), claiming the row then.
   */
  start(organizationId: string, responseId: string, work: BackgroundWork, reserved = false): LiveTurn {
    const turn = new LiveTurn(responseId, this.ledger, this.settings.eventFlushMs, this.logger);
    const lease = this.leases.hold(responseId);
    this.lifecycle.requestStarted();
    let began!: () => void;
    const admitted = new Promise<void>((resolve) => (began = resolve));
    const done = admitted.then(async () => {
      const slot = this.inFlight.occupy(organizationId);
      this.admission.report();
      try {
        if (lease.lost.aborted) return;
        if (!reserved) await this.ledger.markRunning(responseId);
        await this.runStoppable(turn, lease.lost, work);
      } catch (error) {
        this.logger.error({ ...describeUnexpected(error), msg: 'a background turn failed to end cleanly' });
      } finally {
        slot();
        lease.release();
        turn.end();
        this.live.delete(responseId);
        this.lifecycle.requestFinished();
        this.admission.finished(organizationId);
      }
    });
    this.live.set(responseId, { turn, done, began });
    this.admission.enqueue(organizationId, began, reserved);
    return turn;
  }

  /**
   * The app is closing without the shutdown sequence, or past its final window (the sequence
   * finishes or cuts background turns first): stop what is left, and wait until each has stored
   * the events it emitted and the usage it was billed, as a cancelled turn does. Its row stays
   * running, for the other replicas' sweep to fail it. Waited for here, before the usage flush
   * (beforeApplicationShutdown) and the pool's end (onApplicationShutdown): not racing them.
   */
  async onModuleDestroy(): Promise<void> {
    this.closing = true;
    // Bounded: a turn that cannot settle (its store starved, a tool deaf to the abort) must not
    // hold the close; its row stays running for the sweep. Turns started meanwhile are stopped too.
    const late = sleep(STOP_WAIT_MS, 'late' as const, { ref: false });
    while (this.live.size > 0) {
      const stopped = Promise.all([...this.live.keys()].map((responseId) => this.stop(responseId)));
      if ((await Promise.race([stopped, late])) === 'late') {
        this.logger.warn({ msg: 'background turns still running at close', turns: this.live.size });
        return;
      }
    }
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
    this.admission.release(entry.began);
    await entry.done;
    return true;
  }
}
