import type { ApiError } from '../common/errors/error-catalogue.js';
import type { ResponseObject } from './response-view.js';
import type { StoredEvent } from './store/turn-ledger.repository.js';
import type { ResponseRecorder } from './streaming/response-recorder.js';
import type { EndedElsewhere } from './turn-ended.js';

/** A finished (or failed) turn: its Response object, and its final write. */
export interface TurnEnd {
  response: ResponseObject;
  /** `response` as JSON text, serialized once for the stored body and a JSON reply alike. */
  responseJson(): string;
  /**
   * The final write (nothing for `store: false`), then the "turn recorded" effects. `events`: a
   * background turn's stream events not yet stored, written by the same statement. Null when it
   * stored the turn (or had nothing to store). A row ended elsewhere meanwhile keeps its end: the
   * turn's usage is then stored as `saveUsage` does, and what the store holds is returned, for
   * the client to be told that and not `response`.
   */
  save(events?: StoredEvent[][]): Promise<EndedElsewhere | null>;
  /**
   * Instead of `save`, when the turn's row was ended elsewhere (cancelled, or swept while this
   * replica stalled) and a final write would store nothing: only the usage its model calls
   * reported is stored (once), then announced as a recorded turn's (the upstream billed it).
   */
  saveUsage(): Promise<void>;
  /** What the store holds of the turn, for a client to be told after `saveUsage` (one read). */
  storedEnd(): Promise<EndedElsewhere>;
}

/**
 * How a turn's events leave: a JSON reply, an SSE stream, or a background turn's stored events.
 * The run is the same for all three; a sink only decides what the client sees, and when.
 */
export interface TurnSink {
  readonly recorder: ResponseRecorder;
  /** Stops the run: the client left, the lease was lost, the replica's grace period ended. */
  readonly signal: AbortSignal;
  /**
   * The model's first events wait for the start row, and a start that could not be written fails
   * the turn (a stream hands out the id only once the row exists). Otherwise a failed start is
   * made good by the final write, which then stores the whole turn.
   */
  readonly waitsForStart: boolean;
  /**
   * False when nothing of the turn is observable before its end (a JSON reply: no event, and the
   * client learns the id only from the final body): then no start row is written and the turn is
   * stored whole by its final write, one statement. A turn cut before it (kill -9) leaves no row,
   * and its client never had an id to look for.
   */
  readonly recordsStart: boolean;
  /**
   * The turn is recorded and running (`response.created`, `response.in_progress`); `json` gives
   * `response` as JSON text (made once, or the start row's body), for a sink that writes text.
   */
  started(response: ResponseObject, json: () => string): void;
  /** The run ended; the sink calls `end.save()` before or after its last events. */
  complete(end: TurnEnd): Promise<void>;
  /** The run failed; `conclude` builds the failed response and its final write. */
  fail(error: unknown, conclude: (failure: ApiError) => TurnEnd): Promise<void>;
  /** Always called last, whatever happened. */
  close(): void;
}
