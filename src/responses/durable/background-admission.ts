import { ApiError } from '../../common/errors/error-catalogue.js';
import type { AppConfig } from '../../config/app-config.js';
import { organizationBusyError } from '../../limits/in-flight-limiter.service.js';
import type { Metrics } from '../../metrics/metrics.service.js';

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
 * Which background turns of this replica run and which wait: at most BACKGROUND_MAX_RUNNING at
 * once, the others wait (status `queued`), in order of arrival. Each organization's shares stay
 * reserved for it: a turn of an organization running its share
 * (BACKGROUND_MAX_RUNNING_PER_ORGANIZATION) starts only when at least one share of running slots
 * would still be free, otherwise it is passed over, so one organization's flood never holds the
 * others' turns back. Likewise an organization with BACKGROUND_MAX_QUEUED_PER_ORGANIZATION turns
 * waiting is refused (429 `concurrency_limit_exceeded`) only when queuing one more would leave
 * less than one share of the queue free; the replica's whole queue full is 503
 * `service_overloaded`. Counts only: running the turns is BackgroundTurns'.
 */
export class BackgroundAdmission {
  private readonly waiting: Waiting[] = [];
  private readonly shares = new Map<string, Share>();
  private running = 0;

  constructor(
    private readonly settings: AppConfig['durableTurns'],
    private readonly metrics: Metrics,
  ) {}

  /**
   * Refuses a new turn (before anything is stored) when it could neither start nor wait: the
   * replica's queue is full (503), or its organization's share of it is (429). Otherwise true when
   * it can start at once, its running slot then held for it from now (pass `reserved` to `enqueue`,
   * or call `finished` if it will not start). False: it will wait.
   */
  reserve(organizationId: string): boolean {
    this.checkRoom(organizationId);
    if (!this.canStart(organizationId)) return false;
    this.running += 1;
    this.shareOf(organizationId).running += 1;
    return true;
  }

  /** A new turn: `began` is called when it may run, at once when `reserved` or a slot is free. */
  enqueue(organizationId: string, began: () => void, reserved: boolean): void {
    const share = this.shareOf(organizationId);
    if (reserved) began();
    else if (this.canStart(organizationId)) this.admit(share, began);
    else {
      share.queued += 1;
      this.waiting.push({ organizationId, began });
    }
    this.report();
  }

  /** A turn that held a running slot ended (or, reserved, will not start): the next may start. */
  finished(organizationId: string): void {
    const share = this.shareOf(organizationId);
    this.running -= 1;
    share.running -= 1;
    this.forget(organizationId, share);
    this.admitNext();
    this.report();
  }

  /** Lets a queued turn through now, out of turn (it was stopped: it returns at once). */
  release(began: () => void): void {
    const index = this.waiting.findIndex((waiting) => waiting.began === began);
    if (index >= 0) this.releaseAt(index);
  }

  /** The queue and the running turns, to the metrics. */
  report(): void {
    this.metrics.backgroundResponses(this.waiting.length, this.running);
  }

  private checkRoom(organizationId: string): void {
    if (this.canStart(organizationId)) return;
    if (this.waiting.length >= this.settings.maxQueuedBackground) {
      throw new ApiError(
        'service_overloaded',
        'Too many background responses are waiting on this instance; retry later',
        { 'Retry-After': '1' },
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
    if (index >= 0) this.releaseAt(index);
  }

  /** Takes the waiting turn at `index` out of the queue and lets it through. */
  private releaseAt(index: number): void {
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

  /** An organization with nothing running or queued here takes no memory. */
  private forget(organizationId: string, share: Share): void {
    if (share.running === 0 && share.queued === 0 && this.shares.get(organizationId) === share) {
      this.shares.delete(organizationId);
    }
  }
}
