import { ApiError, ERROR_CATALOGUE, type ErrorCode } from '../common/errors/error-catalogue.js';
import { interruptedError } from './durable/turn-leases.service.js';
import { storedToObject, type ResponseObject } from './response-view.js';
import type { StoredResponse } from './store/stored-turn-rows.js';

/**
 * A turn whose final write stored nothing: its row was ended elsewhere meanwhile (swept while
 * this replica stalled, cancelled), or, for a JSON turn, its insert found no row to write under
 * (docs/architecture.md, "Durable turns"). Its client is told what the store holds, never its own end.
 */
export interface EndedElsewhere {
  /** The response as `GET /v1/responses/{id}` shows it; null when no row holds it (GET: 404). */
  response: ResponseObject | null;
  /** The stored error a stream's `response.error` carries, and a JSON reply is answered with. */
  error: ApiError;
}

/** What a client is told of a turn the store holds as `stored` (null: none, or it could not be read). */
export function endedElsewhere(stored: StoredResponse | null): EndedElsewhere {
  if (!stored) {
    return {
      response: null,
      // No row under its id: deleted with its conversation, its user or by DELETE /v1/responses
      // meanwhile (or unreadable): what GET answers, not an invitation to run the turn again.
      error: new ApiError('response_not_found', 'The response is not stored: it was deleted while it ran'),
    };
  }
  return { response: storedToObject(stored), error: storedError(stored) };
}

/**
 * The error of an ended turn that has none of its own to show: `response_cancelled` for a
 * cancelled one, the stored error of a failed one (the sweep's `response_interrupted`).
 */
export function storedError(stored: Pick<StoredResponse, 'status' | 'error'>): ApiError {
  if (stored.status === 'cancelled') return new ApiError('response_cancelled', 'The response was cancelled');
  const error = stored.error;
  if (!error) return interruptedError();
  // Every stored error was an ApiError's body; a code this release does not know stays a server error.
  const code = Object.hasOwn(ERROR_CATALOGUE, error.code) ? (error.code as ErrorCode) : 'server_error';
  return new ApiError(code, error.message);
}
