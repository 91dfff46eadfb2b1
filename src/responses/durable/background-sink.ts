import type { Logger } from '@nestjs/common';
import { logUnexpected } from '../../common/errors/all-exceptions.filter.js';
import { ApiError } from '../../common/errors/error-catalogue.js';
import { shutdownError, type LifecycleState } from '../../lifecycle/lifecycle.state.js';
import type { ResponseObject } from '../response-view.js';
import { ResponseRecorder, type EventStyle } from '../streaming/response-recorder.js';
import type { TurnEnd, TurnSink } from '../turn-sink.js';
import { turnFailure } from '../turn-failure.js';
import type { LiveTurn } from './live-turn.js';

/**
 * A background turn's sink: its events are kept (LiveTurn) for streams that follow it here or
 * resume it on other replicas. `response.completed` (or `response.error`) and the events not yet
 * stored are written by the statement that writes the row's final status, so a stream that sees
 * the final status has every event.
 */
export class BackgroundSink implements TurnSink {
  readonly recorder: ResponseRecorder;
  readonly waitsForStart = false;
  readonly recordsStart = true;

  constructor(
    private readonly live: LiveTurn,
    /** Aborted when the lease is lost or the replica's grace period ends. */
    readonly signal: AbortSignal,
    /** Aborted when the turn was cancelled or taken from this replica. */
    private readonly lost: AbortSignal,
    style: EventStyle,
    private readonly lifecycle: LifecycleState,
    private readonly logger: Logger,
  ) {
    this.recorder = new ResponseRecorder(live, style);
  }

  started(response: ResponseObject): void {
    this.recorder.emit('response.created', { response });
    this.recorder.emit('response.in_progress', { response });
  }

  /** The final event carries the very object the final write stores. */
  async complete(end: TurnEnd): Promise<void> {
    const type = end.response.status === 'incomplete' ? 'response.incomplete' : 'response.completed';
    this.recorder.emit(type, { response: end.response });
    await this.live.finish((events) => end.save(events));
  }

  async fail(error: unknown, conclude: (failure: ApiError) => TurnEnd): Promise<void> {
    if (this.lost.aborted) {
      // Cancelled, or taken from this replica: the row already tells; keep what was emitted, and
      // the tokens the upstream reported so far, which it bills all the same (docs/usage.md).
      // Only the usage of the concluded turn is written, not its status or error.
      await this.live.flush();
      this.live.stopStoring();
      await conclude(new ApiError('response_cancelled', 'The response was cancelled'))
        .saveUsage()
        .catch((failure: unknown) =>
          logUnexpected(this.logger, failure, 'could not store the usage of an ended turn'),
        );
      return;
    }
    const failure = this.lifecycle.drainDeadline.aborted ? shutdownError() : turnFailure(error, this.logger);
    this.recorder.interrupt();
    const end = conclude(failure);
    this.recorder.emit('response.failed', { response: end.response });
    this.recorder.emit('response.error', { error: failure.toBody().error });
    await this.live.finish((events) => end.save(events));
  }

  close(): void {}
}
