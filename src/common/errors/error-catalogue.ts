/**
 * Every error code the service answers with: spec section 7.3 plus decisions.md, and the few
 * transport-level codes (not_found, payload_too_large, request_timeout, headers_too_large,
 * server_error). The filter maps
 * codes to status and type only through this table.
 */
export const ERROR_CATALOGUE = {
  invalid_request: { status: 400, type: 'invalid_request_error' },
  missing_required_field: { status: 400, type: 'invalid_request_error' },
  invalid_model: { status: 400, type: 'invalid_request_error' },
  tool_not_supported_for_model: { status: 400, type: 'invalid_request_error' },
  too_many_tools: { status: 400, type: 'invalid_request_error' },
  duplicate_tool_name: { status: 400, type: 'invalid_request_error' },
  invalid_tool_name: { status: 400, type: 'invalid_request_error' },
  invalid_input_type: { status: 400, type: 'invalid_request_error' },
  missing_call_id: { status: 400, type: 'invalid_request_error' },
  context_length_exceeded: { status: 400, type: 'invalid_request_error' },
  /** The upstream model refused the request under its content policy (its reason in the message). */
  content_policy_violation: { status: 400, type: 'invalid_request_error' },
  /** The upstream model rejected the request as invalid (HTTP 400/413/422, its reason in the message). */
  upstream_invalid_request: { status: 400, type: 'invalid_request_error' },
  missing_api_key: { status: 401, type: 'authentication_error' },
  invalid_api_key: { status: 401, type: 'authentication_error' },
  /** MCP gateway: OAuth bearer tokens from the identity provider (not API keys). */
  missing_token: { status: 401, type: 'authentication_error' },
  invalid_token: { status: 401, type: 'authentication_error' },
  insufficient_scope: { status: 403, type: 'authentication_error' },
  origin_not_allowed: { status: 403, type: 'authentication_error' },
  not_found: { status: 404, type: 'not_found_error' },
  assistant_not_found: { status: 404, type: 'not_found_error' },
  claim_not_found: { status: 404, type: 'not_found_error' },
  memory_item_not_found: { status: 404, type: 'not_found_error' },
  response_not_found: { status: 404, type: 'not_found_error' },
  conversation_not_found: { status: 404, type: 'not_found_error' },
  item_not_found: { status: 404, type: 'not_found_error' },
  /** Files API: no file of the caller's organization (and, for `user_data`, of its user) has this id. */
  /** Vector stores: no store (or file of a store, or batch) of the caller's organization has this id. */
  vector_store_not_found: { status: 404, type: 'not_found_error' },
  vector_store_file_not_found: { status: 404, type: 'not_found_error' },
  vector_store_file_batch_not_found: { status: 404, type: 'not_found_error' },
  file_not_found: { status: 404, type: 'not_found_error' },
  method_not_allowed: { status: 405, type: 'invalid_request_error' },
  /** Answered by the HTTP server itself (src/common/http/client-error.ts), before any route. */
  request_timeout: { status: 408, type: 'invalid_request_error' },
  payload_too_large: { status: 413, type: 'invalid_request_error' },
  /** An upload larger than FILES_MAX_BYTES. */
  file_too_large: { status: 413, type: 'invalid_request_error' },
  /** An upload that would take the organization's files past FILES_ORG_MAX_BYTES. */
  file_storage_quota_exceeded: { status: 400, type: 'invalid_request_error' },
  unsupported_media_type: { status: 415, type: 'invalid_request_error' },
  claim_value_too_large: { status: 422, type: 'validation_error' },
  bulk_limit_exceeded: { status: 422, type: 'validation_error' },
  rate_limit_exceeded: { status: 429, type: 'rate_limit_error' },
  /** The organization is past its share of this replica's responses or queue, and only the others' reserved headroom is left. */
  concurrency_limit_exceeded: { status: 429, type: 'rate_limit_error', retryAfterSeconds: 1 },
  headers_too_large: { status: 431, type: 'invalid_request_error' },
  /** The organization's monthly token budget is spent; Retry-After runs to the next UTC month. */
  token_budget_exceeded: { status: 429, type: 'rate_limit_error' },
  /** Background turns: the stored error of a turn whose replica stopped, the end of a cancelled one's stream. */
  response_interrupted: { status: 500, type: 'server_error' },
  response_cancelled: { status: 409, type: 'invalid_request_error' },
  /** A stored-object quota of the organization (QUOTA_*): delete something first, or ask the platform. */
  quota_exceeded: { status: 409, type: 'invalid_request_error' },
  server_error: { status: 500, type: 'server_error' },
  /** The upstream's stream ended or broke before its finish reason (docs/resilience.md). */
  upstream_stream_interrupted: { status: 502, type: 'server_error' },
  /** The upstream's stream could not be read as Chat Completions events. */
  upstream_malformed_response: { status: 502, type: 'server_error' },
  /** The upstream's stream went silent mid-answer for longer than the stall timeout. */
  upstream_stream_stalled: { status: 504, type: 'server_error' },
  // Every 503 tells the client when to retry (spec 7.3 rule 3: with backoff); a thrower may set
  // its own value, this is the default.
  upstream_unavailable: { status: 503, type: 'server_error', retryAfterSeconds: 1 },
  upstream_timeout: { status: 503, type: 'server_error', retryAfterSeconds: 1 },
  /** The upstream rate-limited the service past the retry budget; Retry-After is the upstream's. */
  upstream_rate_limited: { status: 503, type: 'server_error', retryAfterSeconds: 1 },
  service_overloaded: { status: 503, type: 'server_error', retryAfterSeconds: 1 },
  identity_provider_unavailable: { status: 503, type: 'server_error', retryAfterSeconds: 5 },
  /** The database cannot be reached or cannot serve (an outage, a failover). */
  service_unavailable: { status: 503, type: 'server_error', retryAfterSeconds: 2 },
} as const satisfies Record<string, { status: number; type: ErrorType; retryAfterSeconds?: number }>;

export type ErrorType =
  | 'authentication_error'
  | 'invalid_request_error'
  | 'not_found_error'
  | 'validation_error'
  | 'server_error'
  | 'rate_limit_error';

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

export interface ErrorBody {
  error: { type: ErrorType; code: ErrorCode; message: string };
}

/** The one exception the service throws for a failure a client should see. */
export class ApiError extends Error {
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    readonly code: ErrorCode,
    message: string,
    headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'ApiError';
    const entry = ERROR_CATALOGUE[code];
    this.headers =
      'retryAfterSeconds' in entry && headers['Retry-After'] === undefined
        ? { ...headers, 'Retry-After': String(entry.retryAfterSeconds) }
        : headers;
  }

  get status(): number {
    return ERROR_CATALOGUE[this.code].status;
  }

  toBody(): ErrorBody {
    return { error: { type: ERROR_CATALOGUE[this.code].type, code: this.code, message: this.message } };
  }
}
