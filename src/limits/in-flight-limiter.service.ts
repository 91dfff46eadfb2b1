import { Inject, Injectable } from '@nestjs/common';
import { ApiError } from '../common/errors/error-catalogue.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { LifecycleState, shutdownError } from '../lifecycle/lifecycle.state.js';
import { Metrics } from '../metrics/metrics.service.js';

/** Gives the slot back; calling it more than once is harmless. */
export type Release = () => void;

/**
 * Caps the responses this replica produces at once (MAX_IN_FLIGHT_RESPONSES): JSON and streamed
 * responses, streams following a background turn, and running background turns. Beyond the cap a
 * request is refused at once with 503 `service_overloaded` and `Retry-After: 1` instead of
 * queueing: another replica, or the same one a moment later, can take it.
 *
 * Each organization has a share of those slots (MAX_IN_FLIGHT_PER_ORGANIZATION) that stays
 * reserved for it: an organization past its share is refused (429 `concurrency_limit_exceeded`)
 * only when fewer than one share of the replica's slots would remain free for the others. One
 * organization alone can so use all but one share; when the cap is at most two shares, the share
 * is a strict cap.
 */
@Injectable()
export class InFlightLimiter {
  private current = 0;
  private readonly max: number;
  private readonly perOrganization: number;
  private readonly organizations = new Map<string, number>();

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly lifecycle: LifecycleState,
    private readonly metrics: Metrics,
  ) {
    this.max = config.limits.maxInFlightResponses;
    this.perOrganization = config.limits.maxInFlightPerOrganization;
  }

  get inFlight(): number {
    return this.current;
  }

  /** The slots an organization holds now. */
  heldBy(organizationId: string): number {
    return this.organizations.get(organizationId) ?? 0;
  }

  /** A slot, or null when the replica is full or draining for shutdown (the refusal is counted). */
  tryAcquire(): Release | null {
    if (!this.lifecycle.acceptingResponses) {
      this.metrics.shed('shutdown');
      return null;
    }
    if (this.current >= this.max) {
      this.metrics.shed('overload');
      return null;
    }
    return this.take();
  }

  /** A slot, or the 503 `service_overloaded` (with Retry-After) the client should get. */
  acquire(): Release {
    const release = this.tryAcquire();
    if (release) return release;
    throw this.lifecycle.acceptingResponses ? overloadedError() : shutdownError();
  }

  /**
   * Counts a request that already holds a replica slot against its organization's share, once
   * the organization is known (after authentication); throws 429 `concurrency_limit_exceeded`
   * when the organization holds its share and less than a share of the replica is left free.
   */
  admitOrganization(organizationId: string): Release {
    const held = this.heldBy(organizationId);
    if (held >= this.perOrganization && this.max - this.current < this.perOrganization) {
      this.metrics.shed('organization');
      throw organizationBusyError(held);
    }
    return this.countFor(organizationId);
  }

  /** A replica slot and the organization's share together (a resumed stream); 503 or 429 otherwise. */
  acquireFor(organizationId: string): Release {
    const slot = this.acquire();
    try {
      const share = this.admitOrganization(organizationId);
      return () => {
        share();
        slot();
      };
    } catch (error) {
      slot();
      throw error;
    }
  }

  /**
   * Counts work that was admitted earlier and cannot be refused now (a background turn that leaves
   * the queue): it takes a slot even past the cap, so new requests are shed while it runs.
   */
  occupy(organizationId: string): Release {
    const slot = this.take();
    const share = this.countFor(organizationId);
    return () => {
      share();
      slot();
    };
  }

  private take(): Release {
    this.current += 1;
    this.metrics.responsesInFlight(this.current);
    return once(() => {
      this.current -= 1;
      this.metrics.responsesInFlight(this.current);
    });
  }

  private countFor(organizationId: string): Release {
    this.organizations.set(organizationId, this.heldBy(organizationId) + 1);
    return once(() => {
      const held = this.heldBy(organizationId) - 1;
      if (held > 0) this.organizations.set(organizationId, held);
      else this.organizations.delete(organizationId);
    });
  }
}

function once(release: () => void): Release {
  let released = false;
  return () => {
    if (released) return;
    released = true;
    release();
  };
}

export function overloadedError(): ApiError {
  return new ApiError('service_overloaded', 'The service is at capacity; retry shortly', {
    'Retry-After': '1',
  });
}

/** An organization past its share of a nearly full replica (responses in flight or background queue). */
export function organizationBusyError(held: number): ApiError {
  return new ApiError(
    'concurrency_limit_exceeded',
    `This organization already has ${held} responses in progress on this instance, at least its share, and the rest is reserved for others; retry shortly`,
    { 'Retry-After': '1' },
  );
}
