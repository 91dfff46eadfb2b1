import { Injectable, Logger } from '@nestjs/common';
import { logUnexpected } from '../../common/errors/all-exceptions.filter.js';
import { AbortOnAny } from '../../common/runtime/abort-on-any.js';
import type { ApiError } from '../../common/errors/error-catalogue.js';
import { LifecycleState, shutdownError } from '../../lifecycle/lifecycle.state.js';
import { Metrics } from '../../metrics/metrics.service.js';
import type { ResponseObject } from '../response-view.js';
import type { EndedElsewhere } from '../turn-ended.js';
import type { TurnEnd, TurnSink } from '../turn-sink.js';
import { turnFailure } from '../turn-failure.js';
import type { ClientDeparture } from './client-departure.js';
import { ResponseRecorder, type EventSink, type EventStyle } from './response-recorder.js';

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
export class TurnStream implements TurnSink {
  readonly recorder: ResponseRecorder;
  /** `response.created` hands out the id only once the start row exists. */
  readonly waitsForStart = true;
  readonly recordsStart = true;
  /** Aborted when the client leaves, the lease is lost or the shutdown grace period ends. */
  readonly signal: AbortSignal;
  private opened = false;
  private readonly stops: AbortOnAny;

  constructor(
    private readonly target: StreamTarget,
    /** The client's departure, aborted here for the stream's other reasons as well (one controller). */
    private readonly departure: ClientDeparture,
    style: EventStyle,
    private readonly lifecycle: LifecycleState,
    private readonly metrics: Metrics,
    private readonly logger: Logger,
    /** The turn's lease, when it has one: taken by another replica or cancelled, the turn stops. */
    private readonly lost?: AbortSignal,
  ) {
    this.recorder = new ResponseRecorder(target, style);
    // The departure's own controller is aborted for the other reasons too; close() lets go of them.
    this.stops = new AbortOnAny([lost, lifecycle.drainDeadline], departure);
    this.signal = this.stops.signal;
  }

  /** The client left, or the turn is no longer this replica's: nobody is listening here. */
  private get abandoned(): boolean {
    return this.departure.left || this.lost?.aborted === true;
  }

  /** Sends the headers (the turn is committed to answering as a stream from here on), then the start. */
  started(response: ResponseObject, json: () => string): void {
    // Corked: the headers go out with the two events, in one socket write (SseWriter.open).
    this.target.cork();
    try {
      this.target.open();
      this.opened = true;
      this.metrics.streamOpened();
      const text = json();
      this.recorder.emitResponse('response.created', response, text);
      this.recorder.emitResponse('response.in_progress', response, text);
    } finally {
      this.target.uncork();
    }
  }

  /**
   * Stores the response, then `response.completed` (or `response.incomplete`) with it and
   * `[DONE]`: a client can continue from it at once on any replica. A write that found the row
   * ended elsewhere (swept while the upstream stalled) ends the stream as that row says instead.
   */
  async complete(end: TurnEnd): Promise<void> {
    const ended = await end.save();
    if (ended) {
      this.endAsStored(ended);
      return;
    }
    const type = end.response.status === 'incomplete' ? 'response.incomplete' : 'response.completed';
    // The stored body's text, spliced into the event instead of serializing the Response again.
    this.recorder.emitResponse(type, end.response, end.responseJson());
    this.target.done();
  }

  /**
   * Ends a failed turn: the failed response is stored before the client hears `response.error`
   * (like a completed one), unless the replica's grace period cut the stream.
   */
  async fail(error: unknown, conclude: (failure: ApiError) => TurnEnd): Promise<void> {
    const cutByShutdown = this.lifecycle.drainDeadline.aborted && !this.abandoned;
    const failure = cutByShutdown ? shutdownError() : turnFailure(error, this.logger);
    this.recorder.interrupt();
    const end = conclude(failure);
    // Swept while this replica stalled: the row says failed already, only the usage is stored.
    // The client is told the stored end: this failure when its write stored it, else the row's.
    const stored = (this.lost?.aborted ? end.saveUsage().then(() => end.storedEnd()) : end.save()).then(
      (ended): EndedElsewhere => ended ?? { response: end.response, error: failure },
      (persistError: unknown): EndedElsewhere => {
        logUnexpected(this.logger, persistError, 'could not store a failed response');
        return { response: null, error: failure };
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
    this.endAsStored(await stored);
  }

  /**
   * A failed end: `response.failed` (when there is a failed response to show) for clients that
   * expect it, then the contract's `response.error`, which the official SDKs raise as an APIError.
   * A lost lease does not silence it: the client of a foreground stream is still listening.
   */
  private endAsStored({ response, error }: EndedElsewhere): void {
    if (!this.departure.left) {
      if (response?.status === 'failed') this.recorder.emit('response.failed', { response });
      this.recorder.emit('response.error', { error: error.toBody().error });
    }
    this.target.close();
  }

  /** Always called last, whatever happened. */
  close(): void {
    this.stops.release();
    if (this.opened) this.metrics.streamClosed();
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

  create(
    target: StreamTarget,
    departure: ClientDeparture,
    style: EventStyle,
    lost?: AbortSignal,
  ): TurnStream {
    return new TurnStream(target, departure, style, this.lifecycle, this.metrics, this.logger, lost);
  }
}
