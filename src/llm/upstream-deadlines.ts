/** The deadlines one attempt of a model call runs against (docs/resilience.md). */
export interface UpstreamDeadlineLimits {
  /** Connect plus response headers. */
  headersMs: number;
  /** From the attempt's start to its first output. */
  firstTokenMs: number;
  /** Longest silence between chunks once output has started. */
  stallMs: number;
}

export type DeadlineKind = 'headers' | 'first_token' | 'stall';

/**
 * One timer per attempt, in three phases: headers, then first output, then between chunks. When
 * a phase's time runs out the attempt's request is aborted (the upstream sees the connection
 * close) and `expired` says which deadline it was. The first output re-arms the timer (the
 * headers' arrival does not); within the stall phase each chunk only refreshes it, so a healthy
 * stream costs two timers per attempt and one `refresh()` per read.
 */
export class UpstreamDeadlines {
  expired: DeadlineKind | null = null;
  private phase: DeadlineKind = 'headers';
  private timer: NodeJS.Timeout;
  private readonly startedAt = performance.now();

  constructor(
    private readonly limits: UpstreamDeadlineLimits,
    private readonly controller: AbortController,
  ) {
    this.timer = setTimeout(this.onExpiry, Math.min(limits.headersMs, limits.firstTokenMs));
  }

  /**
   * The response headers arrived: the rest of the first-token deadline runs, on the timer already
   * armed (it fires at the headers deadline at the latest, and then waits out the rest, see
   * `onExpiry`). Not re-armed here: a new delay per turn, a fraction of a millisecond different
   * each time, got a timer list of its own in Node, made, queued and removed again.
   */
  headersArrived(): void {
    this.phase = 'first_token';
  }

  /** A read carried chunks; `output` when they held output (text, reasoning, a tool call). */
  progressed(output: boolean): void {
    if (this.phase === 'stall') this.timer.refresh();
    else if (output) this.arm('stall', this.limits.stallMs);
  }

  /** The milliseconds of the deadline that expired, for the error's message. */
  limitOf(kind: DeadlineKind): number {
    if (kind === 'headers') return Math.min(this.limits.headersMs, this.limits.firstTokenMs);
    return kind === 'first_token' ? this.limits.firstTokenMs : this.limits.stallMs;
  }

  clear(): void {
    clearTimeout(this.timer);
  }

  private arm(phase: DeadlineKind, ms: number): void {
    clearTimeout(this.timer);
    this.phase = phase;
    this.timer = setTimeout(this.onExpiry, ms);
  }

  private readonly onExpiry = (): void => {
    if (this.phase === 'first_token') {
      const left = this.limits.firstTokenMs - (performance.now() - this.startedAt);
      if (left >= 1) {
        this.timer = setTimeout(this.onExpiry, Math.ceil(left));
        return;
      }
    }
    this.expired = this.phase;
    this.controller.abort();
  };
}
