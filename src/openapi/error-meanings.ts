import { ERROR_CATALOGUE, type ErrorCode } from '../common/errors/error-catalogue.js';

/**
 * What each catalogue code means to a client, for the OpenAPI document and the table in
 * docs/api.md. Typed as a full Record so that a code added to the catalogue without a meaning
 * here fails the typecheck instead of reaching the docs undocumented.
 */
export const ERROR_MEANINGS: Record<ErrorCode, string> = {
  invalid_request:
    'Body not JSON or not an object; a field, header, path or query of wrong type, size or text; JSON over 256 levels; malformed HTTP; a foreign cursor or `call_id`',
  missing_required_field:
    'A required field (`model`, `input`, `userId`…) or the `x-user-id` header is absent',
  invalid_model: '`model` is neither an assistant UUID nor `asst_<uuid>`',
  tool_not_supported_for_model:
    'A request tool whose `type` is not `function`, or function tools on an assistant whose model cannot call them',
  too_many_tools: 'More than 128 tools in one request',
  duplicate_tool_name: 'Two tools of one request share a name',
  invalid_tool_name: 'A tool name outside `^[a-zA-Z0-9_-]{1,64}$`',
  invalid_input_type: 'An `input` item with an unknown `type`, `role` or content part',
  missing_call_id: 'A `function_call_output` (or `function_call`) input item without `call_id`',
  context_length_exceeded:
    'The conversation does not fit the model\'s context window (with `truncation: "disabled"`, the default)',
  missing_api_key: 'Neither `x-api-key` nor `Authorization: Bearer` was sent',
  invalid_api_key: 'The API key is malformed, unknown or revoked',
  missing_token: 'MCP gateway or `/metrics`: no bearer token was sent',
  invalid_token: 'MCP gateway, `/metrics` or admin API: the bearer token failed verification',
  insufficient_scope:
    "The key lacks the route's scope, or (MCP gateway) the token is of another organization, or (admin API) the token's groups lack `ADMIN_GROUP`",
  origin_not_allowed: 'MCP gateway: a browser `Origin` that is not allowed',
  not_found:
    'No such route, or no MCP gateway of that name, or (admin API) an organization or key the caller may not see',
  assistant_not_found: "No assistant with that id in the key's organization",
  claim_not_found: "No claim for that userId and claimKey in the key's organization",
  memory_item_not_found: "No memory item with that id for this user in the key's organization",
  response_not_found: "No response with that id for this assistant and user in the key's organization",
  conversation_not_found: "No conversation with that id for this user in the key's organization",
  item_not_found: "No item with that id on the conversation's current branch",
  file_not_found:
    "No file with that id in the key's organization (a `user_data` file: none of this `x-user-id`)",
  vector_store_not_found: "No vector store with that id in the key's organization",
  vector_store_file_not_found: 'No file with that id attached to that vector store',
  vector_store_file_batch_not_found: 'No file batch with that id in that vector store',
  method_not_allowed: 'MCP gateway: GET or DELETE on a stateless endpoint (`Allow: POST`)',
  payload_too_large: 'The request body exceeds `BODY_LIMIT`',
  file_too_large: 'An uploaded file exceeds `FILES_MAX_BYTES`',
  file_storage_quota_exceeded: "The upload would take the organization's files past `FILES_ORG_MAX_BYTES`",
  request_timeout: "The request's headers or body did not arrive in time; the connection is closed",
  headers_too_large:
    'The request line and headers exceed `MAX_HEADER_SIZE` (default 16 KB); the connection is closed',
  unsupported_media_type: 'The request body is of a media type the route does not read',
  claim_value_too_large: '`claimValue` above 64 KB serialized',
  bulk_limit_exceeded: 'More than 50 claims in one bulk request',
  rate_limit_exceeded:
    "The organization's requests per minute (or, admin API, the platform administrator's) are used up; see `Retry-After`",
  concurrency_limit_exceeded:
    "The organization is beyond its share of this replica's capacity; the rest is reserved for others (`MAX_IN_FLIGHT_PER_ORGANIZATION`, `BACKGROUND_MAX_QUEUED_PER_ORGANIZATION`); see `Retry-After`",
  quota_exceeded:
    'The organization already stores as many of these objects as its quota allows (`QUOTA_*`: assistants, specialists, tools, gateways, API keys, items of a conversation)',
  token_budget_exceeded:
    "The organization's monthly token budget is spent; `Retry-After` runs to the next UTC month",
  response_interrupted:
    'Stored on a response (and sent as `response.error` on its resumed stream) whose replica stopped before the turn ended; never an HTTP status',
  response_cancelled:
    'The `response.error` that ends a resumed stream of a cancelled background response; never an HTTP status',
  server_error: 'An unexpected failure; details are only in the server log',
  upstream_unavailable: 'The model provider was unreachable or failed',
  upstream_timeout:
    'The model provider sent no response headers, or no first token, in time (docs/resilience.md); see `Retry-After`',
  upstream_rate_limited:
    "The model provider kept rate-limiting the service past the retry budget; `Retry-After` is the provider's",
  upstream_stream_interrupted:
    "The model provider's stream ended or broke before its finish reason: the answer is incomplete and the response `failed`",
  upstream_malformed_response:
    "The model provider's stream held events that are not Chat Completions chunks and ended without a finish reason",
  upstream_stream_stalled:
    "The model provider's stream went silent mid-answer for longer than the stall timeout; the response is `failed`",
  content_policy_violation:
    'The model provider refused the request under its content policy; its reason is in the message. Do not resend it unchanged',
  upstream_invalid_request:
    'The model provider rejected the request as invalid (e.g. an input it cannot take); its reason is in the message',
  service_overloaded:
    'This replica is at its in-flight cap, out of database connections, or shutting down; see `Retry-After`',
  identity_provider_unavailable:
    "MCP gateway: the identity provider's keys could not be fetched; see `Retry-After`",
  service_unavailable:
    'The database is unreachable or cannot serve (an outage, a failover), or rolled the request back in a conflict with a concurrent one (a deadlock); see `Retry-After`',
};

export interface ErrorCatalogueRow {
  code: ErrorCode;
  status: number;
  type: string;
  meaning: string;
}

/** The catalogue by status, in catalogue order within a status (Array.sort is stable). */
export function errorCatalogueRows(): ErrorCatalogueRow[] {
  return (Object.keys(ERROR_CATALOGUE) as ErrorCode[])
    .map((code) => ({ code, ...ERROR_CATALOGUE[code], meaning: ERROR_MEANINGS[code] }))
    .sort((a, b) => a.status - b.status);
}
