import type { Logger } from '@nestjs/common';
import { describeUnexpected } from '../../common/errors/all-exceptions.filter.js';
import type { TurnLedger, StoredEvent } from '../store/turn-ledger.repository.js';
import type { EventSink } from '../streaming/response-recorder.js';

/** Event types after which a stream has nothing more to say (`response.failed` is followed by `response.error`). */
export const TERMINAL_EVENTS: ReadonlySet<string> = new Set([
  'response.completed',
  'response.error',
  'response.incomplete',
]);

/**
 * The events of one background turn on the replica running it: kept in memory for streams
 * following it here, and written to the database in one row per BACKGROUND_EVENT_FLUSH_MS
 * (never per token) for streams resumed on other replicas. `data` is the JSON text as sent, so a
 * replay from either place is byte-identical.
 */
export class LiveTurn implements EventSink {
  readonly frames: StoredEvent[] = [];
  private pending: StoredEvent[] = [];
  /** Batches formed but not yet stored, oldest first. */
  private unsent: StoredEvent[][] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private readonly listeners = new Set<() => void>();
  private stored = true;
  ended = false;

  constructor(
    readonly responseId: string,
    private readonly ledger: TurnLedger,
    private readonly flushMs: number,
    private readonly logger: Logger,
  ) {}

  event(type: string, payload: Record<string, unknown>): void {
    const event = { sequenceNumber: payload.sequence_number as number, type, data: JSON.stringify(payload) };
    this.frames.push(event);
    if (this.stored) {
      this.pending.push(event);
      this.timer ??= setTimeout(() => void this.flush(), this.flushMs).unref();
    }
    this.notify();
  }

  cork(): void {}

  uncork(): void {}

  drain(): undefined {
    return undefined;
  }

  /**
   * Writes the events not yet stored, one row per batch. A batch the database refused is kept as
   * it was (same first event, same events) and written again before the next one: were it stored
   * after all (a commit whose answer was lost), its key finds it (TurnLedger.appendEvents).
   */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.writing = this.writing.then(async () => {
      if (this.pending.length > 0) {
        this.unsent.push(this.pending);
        this.pending = [];
      }
      while (this.unsent.length > 0) {
        try {
          await this.ledger.appendEvents(this.responseId, this.unsent[0]);
          this.unsent.shift();
        } catch (error) {
          this.logger.warn({ ...describeUnexpected(error), msg: 'could not store background events' });
          if (!this.ended) this.timer ??= setTimeout(() => void this.flush(), this.flushMs).unref();
          return;
        }
      }
    });
    return this.writing;
  }

  /**
   * The turn's last write: `write` stores the events not yet stored (the batches a refused flush
   * kept, then the rest) in the very statement that stores the turn's final row, so the final
   * events and the final status are stored together or not at all (a final flush of its own could
   * fail while the final row is stored, and a resume would lose the last events). Runs after a
   * flush in progress; on failure the batches are kept for the next attempt.
   */
  finish(write: (batches: StoredEvent[][]) => Promise<unknown>): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const finished = this.writing.then(async () => {
      if (this.pending.length > 0) {
        this.unsent.push(this.pending);
        this.pending = [];
      }
      await write(this.unsent);
      this.unsent = [];
    });
    this.writing = finished.catch(() => undefined);
    return finished;
  }

  /** The turn was cancelled or taken from this replica: nothing more is stored. */
  stopStoring(): void {
    this.stored = false;
    this.pending = [];
    this.unsent = [];
    clearTimeout(this.timer);
  }

  end(): void {
    this.ended = true;
    clearTimeout(this.timer);
    this.notify();
  }

  /** Resolves at the next event, at the end of the turn, or when `signal` aborts. */
  changed(signal: AbortSignal): Promise<void> {
    if (this.ended || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.listeners.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.listeners.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }
}
