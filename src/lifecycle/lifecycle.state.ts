import { Injectable } from '@nestjs/common';
import { ApiError } from '../common/errors/error-catalogue.js';

/**
 * Where this replica is in its life, shared by readiness, the in-flight limiter, the shutdown
 * sequence and the code that streams responses.
 *
 * - `running`: normal service.
 * - `stopping`: readiness is false so load balancers stop routing here; requests are still served.
 * - `draining`: the listener is closed; requests in flight finish, new responses are refused.
 * - `expired`: the grace period is over; `drainDeadline` is aborted and open streams must end.
 */
export type LifecyclePhase = 'running' | 'stopping' | 'draining' | 'expired';

@Injectable()
export class LifecycleState {
  private current: LifecyclePhase = 'running';
  private readonly grace = new AbortController();
  private active = 0;
  private idleWaiters: (() => void)[] = [];
  private readonly pendingWrites = new Set<Promise<unknown>>();

  get phase(): LifecyclePhase {
    return this.current;
  }

  /** True from the first shutdown signal on: readiness reports not ready. */
  get shuttingDown(): boolean {
    return this.current !== 'running';
  }

  /** False once the listener has closed: a new response would outlive the replica. */
  get acceptingResponses(): boolean {
    return this.current === 'running' || this.current === 'stopping';
  }

  /**
   * Aborted when the shutdown grace period ends. Code that streams a response combines it with
   * the client's own signal (`AbortSignal.any`) and, when it fires, ends the stream with
   * `response.error` carrying `shutdownError()`.
   */
  get drainDeadline(): AbortSignal {
    return this.grace.signal;
  }

  /** HTTP requests this replica is answering right now (streams included). */
  get activeRequests(): number {
    return this.active;
  }

  beginShutdown(): void {
    if (this.current === 'running') this.current = 'stopping';
  }

  stopAccepting(): void {
    if (this.current === 'running' || this.current === 'stopping') this.current = 'draining';
  }

  expireGracePeriod(): void {
    this.current = 'expired';
    if (!this.grace.signal.aborted) this.grace.abort(shutdownError());
  }

  requestStarted(): void {
    this.active += 1;
  }

  requestFinished(): void {
    this.active = Math.max(0, this.active - 1);
    if (this.active === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  /**
   * Keeps the database open during shutdown until `write` settles, even after the request that
   * started it has ended (a stream cut by the grace period tells its client before it is stored).
   */
  finishBeforeExit<T>(write: Promise<T>): Promise<T> {
    this.pendingWrites.add(write);
    const forget = () => this.pendingWrites.delete(write);
    write.then(forget, forget);
    return write;
  }

  /** Resolves once every write handed to `finishBeforeExit` has settled. */
  async whenWritesSettled(): Promise<void> {
    await Promise.allSettled([...this.pendingWrites]);
  }

  /** Resolves as soon as no request is in flight. */
  whenIdle(): Promise<void> {
    if (this.active === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}

/** What a request refused, or a stream cut, by a replica that is going away tells the client. */
export function shutdownError(): ApiError {
  return new ApiError('service_overloaded', 'This service instance is shutting down; retry the request', {
    'Retry-After': '1',
  });
}
