import type { ModelEvent } from './llm.types.js';
import type { ModelEventReader } from './model-event-stream.js';

/** What the failover does around the target that owns a call (FailoverProvider). */
export interface TargetOutcomes {
  /** Each batch handed on (the text a continuation would need). */
  relayed?(batch: ModelEvent[]): void;
  /** The target's answer completed: its attempt and breaker are recorded. */
  completed(): Promise<void>;
  /** The target failed after its output: records it, then throws, or hands on a continuation's reader. */
  failed(error: unknown): Promise<ModelEventReader>;
  /** The target is done with, whatever happened (its running-call count ends). */
  done(): void;
}

/**
 * The target that owns a model call once its output reached the turn: it cannot be switched any
 * more, so its reads pass straight through, synchronously, and only its end or failure waits, for
 * the failover's accounting (the attempt, the breaker, a continuation).
 */
export class CommittedTarget implements ModelEventReader {
  /** The end's or failure's accounting, while it runs. */
  private settling: Promise<void> | undefined;
  private over = false;
  private failure: { error: unknown } | undefined;
  private closed = false;
  /** The answer was cut and another target continues it (its reader is `reader` now). */
  private continuing = false;

  constructor(
    private reader: ModelEventReader,
    private readonly outcomes: TargetOutcomes,
  ) {}

  read(): ModelEvent[] | null | undefined {
    if (this.failure) throw this.failure.error;
    if (this.over) return undefined;
    if (this.settling) return null;
    let batch: ModelEvent[] | null | undefined;
    try {
      batch = this.reader.read();
    } catch (error) {
      if (this.continuing) {
        this.failure = { error };
        this.finish();
        throw error;
      }
      this.settling = this.settle(this.outcomes.failed(error));
      return null;
    }
    if (batch === undefined) {
      if (this.continuing) {
        this.finish();
        return undefined;
      }
      this.settling = this.settle(this.outcomes.completed().then(() => undefined));
      return null;
    }
    // A continuation is never continued in turn (its failure ends the call): its text is not kept.
    if (batch !== null && !this.continuing) this.outcomes.relayed?.(batch);
    return batch;
  }

  readable(): Promise<void> {
    return this.settling ?? this.reader.readable();
  }

  close(): void {
    this.closed = true;
    if (this.over || this.failure || this.settling) return;
    this.reader.close();
    this.finish();
  }

  private async settle(outcome: Promise<ModelEventReader | undefined>): Promise<void> {
    try {
      const continuation = await outcome;
      if (continuation) {
        // A continuation records its own attempts and outcome: it is only read from now on.
        this.continuing = true;
        this.reader = continuation;
        this.settling = undefined;
        if (this.closed) this.close();
        return;
      }
    } catch (error) {
      this.failure = { error };
    }
    this.settling = undefined;
    this.finish();
  }

  private finish(): void {
    if (this.over) return;
    this.over = true;
    this.outcomes.done();
  }
}
