import { APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import {
  ContextLengthError,
  TurnAbortedError,
  UnsupportedParameterError,
  UpstreamError,
  type UpstreamErrorCode,
} from './llm.types.js';
import type { UpstreamDeadlines } from './upstream-deadlines.js';
import { RetryableUpstreamError, retryAfterMs } from './upstream-retry.js';

const RETRYABLE_STATUS = new Set([408, 409, 429, 500, 502, 503, 504]);

/** Statuses whose refusal is about the request itself: the client hears the provider's reason. */
const INVALID_REQUEST_STATUS = new Set([400, 413, 415, 422]);

/** The stream ended (EOF, or `[DONE]`) before a chunk carried a finish reason. */
export class StreamEndedEarlyError extends Error {
  constructor(
    readonly malformed: number,
    /** It ended with `[DONE]` (a server that never sends finish reasons), not a bare end of body. */
    readonly sawDone = false,
  ) {
    super('The upstream stream ended before its finish reason');
  }
}

/** The stream held more malformed events than a stream with a few glitches would. */
export class MalformedStreamError extends Error {
  constructor(readonly malformed: number) {
    super('The upstream stream is malformed');
  }
}

/** The upstream sent `{"error": …}` as an event of its stream. */
export class StreamErrorEvent extends Error {
  constructor(readonly detail: unknown) {
    super('The upstream reported an error in the stream');
  }
}

export interface AttemptState {
  deadlines: UpstreamDeadlines;
  clientAborted: boolean;
  /** Output of this attempt has been handed on: nothing may be retried any more. */
  outputStarted: boolean;
}

/**
 * What a failed attempt means to the turn: a retryable failure before the output, a clean
 * error the client sees, or the client's own abort. Provider text reaches the client only for
 * a refused request (4xx), sanitized.
 */
export function classifyUpstreamFailure(error: unknown, state: AttemptState): Error {
  if (state.clientAborted) return new TurnAbortedError();
  const expired = state.deadlines.expired;
  if (expired !== null) return deadlineError(expired, state.deadlines.limitOf(expired));
  if (error instanceof APIConnectionTimeoutError) {
    return new UpstreamError('upstream_timeout', 'The upstream model did not answer in time');
  }
  if (error instanceof APIUserAbortError) return new TurnAbortedError();
  if (error instanceof APIError && typeof error.status === 'number') {
    return httpError(error as APIError<number, Headers | undefined>, error.status);
  }
  if (error instanceof StreamEndedEarlyError || error instanceof MalformedStreamError) {
    const code: UpstreamErrorCode =
      error.malformed > 0 ? 'upstream_malformed_response' : 'upstream_stream_interrupted';
    const message =
      error instanceof MalformedStreamError
        ? `The upstream model's stream held ${error.malformed} malformed events; it was abandoned`
        : error.malformed > 0
          ? `The upstream model's stream held ${error.malformed} malformed event(s) and ended without a finish reason`
          : error instanceof StreamEndedEarlyError && error.sawDone
            ? "The upstream model's stream sent [DONE] without a finish reason: the answer may be incomplete"
            : state.outputStarted
              ? "The upstream model's stream was cut mid-answer: it ended without a finish reason"
              : "The upstream model's stream ended without any answer or finish reason";
    return midStream(new UpstreamError(code, message), state);
  }
  if (error instanceof StreamErrorEvent) {
    const reason = providerMessage(error.detail);
    return midStream(
      new UpstreamError(
        'upstream_unavailable',
        `The upstream model reported an error in its stream${reason ? `: ${reason}` : ''}`,
      ),
      state,
    );
  }
  // Connection refused or reset, a body that broke off: worth another try before the output.
  return state.outputStarted
    ? new UpstreamError(
        'upstream_stream_interrupted',
        "The connection to the upstream model broke mid-answer, before the model's finish reason",
      )
    : new RetryableUpstreamError(
        new UpstreamError('upstream_unavailable', 'The upstream model is unreachable'),
      );
}

function midStream(error: UpstreamError, state: AttemptState): Error {
  return state.outputStarted ? error : new RetryableUpstreamError(error);
}

function deadlineError(kind: 'headers' | 'first_token' | 'stall', ms: number): UpstreamError {
  if (kind === 'headers') {
    return new UpstreamError('upstream_timeout', `The upstream model sent no response within ${ms} ms`);
  }
  if (kind === 'first_token') {
    return new UpstreamError('upstream_timeout', `The upstream model sent no output within ${ms} ms`);
  }
  return new UpstreamError(
    'upstream_stream_stalled',
    `The upstream model's stream stalled mid-answer: nothing for ${ms} ms`,
  );
}

function httpError(error: APIError<number, Headers | undefined>, status: number): Error {
  if (status === 400 && isContextLengthError(error)) {
    return new ContextLengthError(undefined, providerMessage(error.error) || undefined);
  }
  const param = status === 400 ? error.param : undefined;
  if (typeof param === 'string' && param.length > 0) return new UnsupportedParameterError(param);
  const reason = providerMessage(error.error);
  if (isContentPolicyError(error, reason)) {
    return new UpstreamError(
      'content_policy_violation',
      `The upstream model refused the request under its content policy${reason ? `: ${reason}` : ''}`,
      undefined,
      status,
    );
  }
  if (INVALID_REQUEST_STATUS.has(status)) {
    return new UpstreamError(
      'upstream_invalid_request',
      `The upstream model rejected the request (HTTP ${status})${reason ? `: ${reason}` : ''}`,
      undefined,
      status,
    );
  }
  const hint = retryAfterMs(error.headers);
  const retryAfterSeconds = hint === undefined ? undefined : Math.max(1, Math.ceil(hint / 1000));
  if (status === 429 && error.code === 'insufficient_quota') {
    return new UpstreamError(
      'upstream_unavailable',
      "The upstream account's quota is exhausted (HTTP 429)",
      undefined,
      status,
    );
  }
  if (status === 429) {
    const upstream = new UpstreamError(
      'upstream_rate_limited',
      `The upstream model is rate-limiting the service${retryAfterSeconds ? `; retry after ${retryAfterSeconds} s` : ''}`,
      retryAfterSeconds,
      status,
    );
    return new RetryableUpstreamError(upstream, hint);
  }
  const upstream = new UpstreamError(
    'upstream_unavailable',
    `The upstream model answered HTTP ${status}`,
    retryAfterSeconds,
    status,
  );
  return RETRYABLE_STATUS.has(status) ? new RetryableUpstreamError(upstream, hint) : upstream;
}

/** OpenAI says `context_length_exceeded`; vLLM, Ollama and LiteLLM say it in words. */
function isContextLengthError(error: APIError): boolean {
  if (error.code === 'context_length_exceeded') return true;
  return /context length|context window|maximum context|too many tokens|prompt is too long/i.test(
    error.message,
  );
}

/** OpenAI: `content_policy_violation`; Azure: `content_filter`; others say it in words. */
function isContentPolicyError(error: APIError, reason: string): boolean {
  if (error.status !== 400 && error.status !== 403 && error.status !== 422) return false;
  const code = `${error.code ?? ''} ${error.type ?? ''}`;
  if (/content_policy|content_filter|moderation|safety/i.test(code)) return true;
  return /content (management )?policy|content filter|safety system|flagged/i.test(reason);
}

const MAX_REASON = 400;

/**
 * The provider's own message, fit for a client: control characters out, anything that looks
 * like a credential (a key, a bearer token, a long opaque string) redacted, cut to 400 characters.
 */
export function providerMessage(body: unknown): string {
  const source =
    typeof body === 'object' && body !== null
      ? ((body as { message?: unknown; error?: { message?: unknown } }).message ??
        (body as { error?: { message?: unknown } }).error?.message)
      : body;
  if (typeof source !== 'string') return '';
  const clean = source
    // eslint-disable-next-line no-control-regex -- stripping control characters is the point
    .replace(/[\u0000-\u001f\u007f]+/g, ' ')
    .replace(/\bBearer\s+\S+/gi, 'Bearer [redacted]')
    .replace(/\b(sk|pk|rk|swb|key|api[-_]?key)[-_:=][\w\-*.]{6,}/gi, '[redacted]')
    .replace(/[A-Za-z0-9+/_-]{32,}={0,2}/g, '[redacted]')
    .replace(/\s+/g, ' ')
    .trim();
  return clean.length > MAX_REASON ? `${clean.slice(0, MAX_REASON - 1)}…` : clean;
}
