import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { describeUnexpected } from '../../common/errors/all-exceptions.filter.js';
import { ApiError } from '../../common/errors/error-catalogue.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { LifecycleState } from '../../lifecycle/lifecycle.state.js';
import { InFlightLimiter, organizationBusyError } from '../../limits/in-flight-limiter.service.js';
import { Metrics } from '../../metrics/metrics.service.js';
import { TurnLedger } from '../store/turn-ledger.repository.js';
import { LiveTurn } from './live-turn.js';
import { TurnLeases } from './turn-leases.service.js';

/** Runs one background turn; `lost` aborts when it was cancelled or taken from this replica. */
/** How long closing the app waits for stopped background turns to store what they emitted. */
const STOP_WAIT_MS = 5000;

export type BackgroundWork = (live: LiveTurn, signal: AbortSignal, lost: AbortSignal) => Promise<void>;

/** A queued turn: its organization, and what lets it start. */
interface Waiting {
  organizationId: string;
  began: () => void;
}

/** An organization's background turns on this replica. */
interface Share {
  running: number;
  queued: number;
}

/**
 * The background turns of this replica: at most BACKGROUND_MAX_RUNNING at once, the others wait
 * (status `queued`), in order of arrival. Each organization's shares stay reserved for it: a turn
 * of an organization running its share (BACKGROUND_MAX_RUNNING_PER_ORGANIZATION) starts only when
 * at least one share of running slots would still be free, otherwise it is passed over, so one
 * organization's flood never holds the others' turns back. Likewise an organization with
 * BACKGROUND_MAX_QUEUED_PER_ORGANIZATION turns waiting is refused (429
 * `concurrency_limit_exceeded`) only when queuing one more would leave less than one share of the
 * queue free; the replica's whole queue full is 503 `service_overloaded`. A running turn holds a slot of the in-flight cap (MAX_IN_FLIGHT_RESPONSES,
 * and its organization's share of it). Each holds its lease while queued or running. They count
 * as requests in flight for the shutdown sequence, so a leaving replica finishes them within its
 * grace period; the grace deadline cuts the rest, which are stored `failed` with a retryable error.
 */
@Injectable()
export class BackgroundTurns implements OnModuleDestroy {
  private readonly live = new Map<string, { turn: LiveTurn; done: Promise<void>; began: () => void }>();
  private readonly waiting: Waiting[] = [];
  private readonly shares = new Map<string, Share>();
  private running = 0;
  /** Set when the app closes: no new background turn is taken from then on. */
  private closing = false;
  private readonly logger = new Logger('BackgroundTurns');
  private readonly settings: AppConfig['durableTurns'];

  constructor(
    private readonly ledger: TurnLedger,
    private readonly leases: TurnLeases,
    private readonly lifecycle: LifecycleState,
    private readonly metrics: Metrics,
    private readonly inFlight: InFlightLimiter,
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

  /**
   * Refuses a new background turn (before anything is stored) when it could neither start nor
   * wait: the replica's queue is full (503), or its organization's share of it is (429).
   */
  private checkRoom(organizationId: string): void {
    if (this.closing) {
      throw new ApiError('service_unavailable', 'This instance is shutting down; retry shortly', {
        'Retry-After': '1',
      });
    }
    if (this.canStart(organizationId)) return;
    if (this.waiting.length >= this.settings.maxQueuedBackground) {
      throw new ApiError(
        'service_overloaded',
        'Too many background responses are waiting on this instance; retry later',
        {
          'Retry-After': '1',
        },
      );
    }
    const share = this.shares.get(organizationId) ?? { running: 0, queued: 0 };
    const perOrganization = this.settings.maxQueuedBackgroundPerOrganization;
    const free = this.settings.maxQueuedBackground - this.waiting.length;
    if (share.queued >= perOrganization && free <= perOrganization) {
      this.metrics.shed('organization');
      throw organizationBusyError(share.running + share.queued);
    }
  }

  /**
   * Refuses a new turn as checkRoom does; otherwise true when it can start at once, its running
   * slot then held for it from now (pass `true` to `start`, or call `unreserve` if its start row
   * could not be written), so it is recorded running and needs no claim. False: it will wait.
   */
  reserve(organizationId: string): boolean {
    this.checkRoom(organizationId);
    if (!this.canStart(organizationId)) return false;
    this.running += 1;
    this.shareOf(organizationId).running += 1;
    return true;
  }

  /** Gives back the slot `reserve` held for a turn that will not start. */
  unreserve(organizationId: string): void {
    const share = this.shareOf(organizationId);
    this.running -= 1;
    share.running -= 1;
    this.forget(organizationId, share);
    this.admitNext();
    this.report();
  }

  /**
   * Starts `work`: at once when `reserved` (its slot held by `reserve`, its row recorded
   * `in_progress`); otherwise its row says `queued`, and it starts now or once a running turn of
   * this replica ends and it can start (see canStart), claiming the row then.
   */
  start(organizationId: string, responseId: string, work: BackgroundWork, reserved = false): LiveTurn {
    const turn = new LiveTurn(responseId, this.ledger, this.settings.eventFlushMs, this.logger);
    const lease = this.leases.hold(responseId);
    const share = this.shareOf(organizationId);
    this.lifecycle.requestStarted();
    let began!: () => void;
    const admitted = new Promise<void>((resolve) => (began = resolve));
    const done = admitted.then(async () => {
      const slot = this.inFlight.occupy(organizationId);
      this.report();
      try {
        if (lease.lost.aborted) return;
        if (!reserved) await this.ledger.markRunning(responseId);
        await this.runStoppable(turn, lease.lost, work);
      } catch (error) {
        this.logger.error({ ...describeUnexpected(error), msg: 'a background turn failed to end cleanly' });
      } finally {
        this.running -= 1;
        share.running -= 1;
        slot();
        this.forget(organizationId, share);
        lease.release();
        turn.end();
        this.live.delete(responseId);
        this.lifecycle.requestFinished();
        this.admitNext();
        this.report();
      }
    });
    this.live.set(responseId, { turn, done, began });
    if (reserved) began();
    else if (this.canStart(organizationId)) this.admit(share, began);
    else {
      share.queued += 1;
      this.waiting.push({ organizationId, began });
    }
    this.report();
    return turn;
  }

  /** A free slot, and the organization under its share or a share still free after this turn. */
  private canStart(organizationId: string): boolean {
    const free = this.settings.maxRunningBackground - this.running;
    const perOrganization = this.settings.maxRunningBackgroundPerOrganization;
    return (
      free > 0 &&
      ((this.shares.get(organizationId)?.running ?? 0) < perOrganization || free > perOrganization)
    );
  }

  /** Lets the first waiting turn that can start (see canStart) start. */
  private admitNext(): void {
    if (this.running >= this.settings.maxRunningBackground) return;
    const index = this.waiting.findIndex(({ organizationId }) => this.canStart(organizationId));
    if (index >= 0) this.release(index);
  }

  /** Takes the waiting turn at `index` out of the queue and lets it through. */
  private release(index: number): void {
    const [next] = this.waiting.splice(index, 1);
    const share = this.shareOf(next.organizationId);
    share.queued -= 1;
    this.admit(share, next.began);
  }

  /** Counted as running at once, so nothing else is admitted past a share before the turn starts. */
  private admit(share: Share, began: () => void): void {
    this.running += 1;
    share.running += 1;
    began();
  }

  private shareOf(organizationId: string): Share {
    let share = this.shares.get(organizationId);
    if (!share) {
      share = { running: 0, queued: 0 };
      this.shares.set(organizationId, share);
    }
    return share;
  }

  private forget(organizationId: string, share: Share): void {
    if (share.running === 0 && share.queued === 0 && this.shares.get(organizationId) === share) {
      this.shares.delete(organizationId);
    }
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
    const index = this.waiting.findIndex(({ began }) => began === entry.began);
    if (index >= 0) this.release(index);
    await entry.done;
    return true;
  }

  private report(): void {
    this.metrics.backgroundResponses(this.waiting.length, this.running);
  }
}
