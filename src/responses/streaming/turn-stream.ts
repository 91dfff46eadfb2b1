import { Injectable, Logger } from '@nestjs/common';
import { logUnexpected } from '../../common/errors/all-exceptions.filter.js';
import type { ApiError } from '../../common/errors/error-catalogue.js';
import { LifecycleState, shutdownError } from '../../lifecycle/lifecycle.state.js';
import { Metrics } from '../../metrics/metrics.service.js';
import type { ResponseObject } from '../response-view.js';
import { turnFailure } from '../turn-failure.js';
import { ResponseRecorder, type EventSink } from './response-recorder.js';

/** Where a streamed turn's events are written (SseWriter on the HTTP response). */
export interface StreamTarget extends EventSink {
  open(): void;
  done(): void;
  close(): void;
}

/**
 * One streamed turn on its way to the client, and the stream's shutdown policy: the turn ends
 * when its client leaves or when this replica's grace period ends; a stream cut by shutdown tells
 * its client first and keeps the database open until the failed response is stored.
 */
export class TurnStream {
  readonly recorder: ResponseRecorder;
  /** Aborted when the client leaves or the shutdown grace period ends. */
  readonly signal: AbortSignal;

  constructor(
    private readonly target: StreamTarget,
    private readonly clientGone: AbortSignal,
    statusEvents: boolean,
    private readonly lifecycle: LifecycleState,
    private readonly metrics: Metrics,
    private readonly logger: Logger,
  ) {
    this.recorder = new ResponseRecorder(target, statusEvents);
    this.signal = AbortSignal.any([clientGone, lifecycle.drainDeadline]);
  }

  /** Sends the headers; the turn is committed to answering as a stream from here on. */
  open(): void {
    this.target.open();
    this.metrics.streamOpened();
  }

  /** `response.completed` with the stored response, then `[DONE]`. */
  complete(response: ResponseObject): void {
    this.recorder.emit('response.completed', { response });
    this.target.done();
  }

  /**
   * Ends a failed turn: `store` writes the failed response, which happens before the client hears
   * `response.error` (like a completed one), unless the replica's grace period cut the stream.
   */
  async fail(error: unknown, store: (failure: ApiError) => Promise<unknown>): Promise<void> {
    const cutByShutdown = this.lifecycle.drainDeadline.aborted && !this.clientGone.aborted;
    const failure = cutByShutdown ? shutdownError() : turnFailure(error, this.logger);
    this.recorder.interrupt();
    const stored = store(failure).then(
      () => undefined,
      (persistError: unknown) => {
        logUnexpected(this.logger, persistError, 'could not store a failed response');
      },
    );
    if (cutByShutdown) {
      // The replica is leaving and its last seconds are short: the client hears it first, and
      // the shutdown sequence keeps the database open until the row is written.
      this.recorder.emit('response.error', { error: failure.toBody().error });
      this.target.close();
      await this.lifecycle.finishBeforeExit(stored);
      return;
    }
    await stored;
    if (!this.clientGone.aborted) this.recorder.emit('response.error', { error: failure.toBody().error });
    this.target.close();
  }

  /** Always called last, whatever happened. */
  end(): void {
    this.metrics.streamClosed();
  }
}

/** Opens TurnStreams with this replica's lifecycle and metrics. */
@Injectable()
export class TurnStreams {
  private readonly logger = new Logger('Responses');

  constructor(
    private readonly lifecycle: LifecycleState,
    private readonly metrics: Metrics,
  ) {}

  create(target: StreamTarget, clientGone: AbortSignal, statusEvents: boolean): TurnStream {
    return new TurnStream(target, clientGone, statusEvents, this.lifecycle, this.metrics, this.logger);
  }
}
