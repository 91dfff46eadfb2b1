import { Inject, Injectable } from '@nestjs/common';
import { ApiError } from '../common/errors/error-catalogue.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { LifecycleState, shutdownError } from '../lifecycle/lifecycle.state.js';
import { Metrics } from '../metrics/metrics.service.js';

/** Gives the slot back; calling it more than once is harmless. */
export type Release = () => void;

/**
 * Caps the responses this replica produces at once (MAX_IN_FLIGHT_RESPONSES). Beyond the cap a
 * request is refused at once with 503 `service_overloaded` and `Retry-After: 1` instead of
 * queueing: another replica, or the same one a moment later, can take it.
 */
@Injectable()
export class InFlightLimiter {
  private current = 0;
  private readonly max: number;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly lifecycle: LifecycleState,
    private readonly metrics: Metrics,
  ) {
    this.max = config.limits.maxInFlightResponses;
  }

  get inFlight(): number {
    return this.current;
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
    this.current += 1;
    this.metrics.responsesInFlight(this.current);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.current -= 1;
      this.metrics.responsesInFlight(this.current);
    };
  }

  /** A slot, or the 503 `service_overloaded` (with Retry-After) the client should get. */
  acquire(): Release {
    const release = this.tryAcquire();
    if (release) return release;
    throw this.lifecycle.acceptingResponses ? overloadedError() : shutdownError();
  }
}

export function overloadedError(): ApiError {
  return new ApiError('service_overloaded', 'The service is at capacity; retry shortly', {
    'Retry-After': '1',
  });
}
