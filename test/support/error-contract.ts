import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The error envelope as the contract states it, for oracles that must not trust the code under
 * test: the shared spec's §7 (the envelope, the six error types, the codes by HTTP status) and
 * the documented error table of docs/api.md (the codes this service adds), read as text. Nothing
 * here imports src/: a catalogue entry that drifts from the documents fails the oracle.
 */

/** Spec §7.2: every error type there is. */
const SPEC_TYPES = [
  'authentication_error',
  'invalid_request_error',
  'not_found_error',
  'validation_error',
  'server_error',
  'rate_limit_error',
];

/** Spec §7.3: the contract's own codes and their status and type (422's type is "not shown"). */
const SPEC_CODES: Record<string, [number, string | undefined]> = {
  invalid_request: [400, 'invalid_request_error'],
  missing_required_field: [400, 'invalid_request_error'],
  invalid_model: [400, 'invalid_request_error'],
  tool_not_supported_for_model: [400, 'invalid_request_error'],
  too_many_tools: [400, 'invalid_request_error'],
  duplicate_tool_name: [400, 'invalid_request_error'],
  invalid_tool_name: [400, 'invalid_request_error'],
  invalid_input_type: [400, 'invalid_request_error'],
  missing_call_id: [400, 'invalid_request_error'],
  missing_api_key: [401, 'authentication_error'],
  invalid_api_key: [401, 'authentication_error'],
  insufficient_scope: [403, 'authentication_error'],
  assistant_not_found: [404, 'not_found_error'],
  claim_not_found: [404, 'not_found_error'],
  memory_item_not_found: [404, 'not_found_error'],
  response_not_found: [404, 'not_found_error'],
  claim_value_too_large: [422, undefined],
  bulk_limit_exceeded: [422, undefined],
  rate_limit_exceeded: [429, 'rate_limit_error'],
  upstream_unavailable: [503, 'server_error'],
  upstream_timeout: [503, 'server_error'],
  service_overloaded: [503, 'server_error'],
};

/** docs/api.md's table between `errors:start` and `errors:end`: code → [status, type]. */
function documentedCodes(): Record<string, [number, string]> {
  const text = readFileSync(fileURLToPath(new URL('../../docs/api.md', import.meta.url)), 'utf8');
  const table = text.split('<!-- errors:start -->')[1]?.split('<!-- errors:end -->')[0] ?? '';
  const codes: Record<string, [number, string]> = {};
  for (const match of table.matchAll(/^\|\s*`([a-z_]+)`\s*\|\s*(\d{3})\s*\|\s*`([a-z_]+)`\s*\|/gm)) {
    codes[match[1]] = [Number(match[2]), match[3]];
  }
  return codes;
}

export const DOCUMENTED_CODES = documentedCodes();

/** Codes that end a stream or a stored response and are never an HTTP status (docs/api.md). */
const NEVER_AN_HTTP_STATUS = ['response_cancelled', 'response_interrupted'];

/** Why this reply is not an error of the contract, or undefined when it is one. */
export function envelopeViolation(status: number, body: unknown, headers?: Headers): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return 'the body is not a JSON object';
  if (Object.keys(body).join() !== 'error') return 'the body has keys besides `error`';
  const error = (body as { error: unknown }).error as Record<string, unknown>;
  if (typeof error !== 'object' || error === null) return '`error` is not an object';
  if (Object.keys(error).sort().join() !== 'code,message,type') return '`error` is not {type, code, message}';
  const { type, code, message } = error;
  if (typeof type !== 'string' || typeof code !== 'string' || typeof message !== 'string') {
    return 'type, code and message are not all strings';
  }
  if (!SPEC_TYPES.includes(type)) return `type ${type} is not one of the contract's error types`;
  const documented = DOCUMENTED_CODES[code];
  if (documented === undefined) return `code ${code} is not documented`;
  if (documented[0] !== status || documented[1] !== type) {
    return `code ${code} is documented as ${documented.join(' ')}, answered ${status} ${type}`;
  }
  if (NEVER_AN_HTTP_STATUS.includes(code)) return `code ${code} is documented as never an HTTP status`;
  const spec = SPEC_CODES[code];
  if (spec && (spec[0] !== status || (spec[1] !== undefined && spec[1] !== type))) {
    return `code ${code} is ${spec.join(' ')} in the contract, answered ${status} ${type}`;
  }
  if ((status === 401 || status === 403) && type !== 'authentication_error')
    return `${status} with type ${type}`;
  if (status === 404 && type !== 'not_found_error') return `404 with type ${type}`;
  if (status >= 500 && type !== 'server_error') return `${status} with type ${type}`;
  if (status === 429 && headers && !headers.get('retry-after')) return '429 without Retry-After';
  if (message.trim() === '') return 'an empty message';
  if (/\n\s+at |\bSELECT\b|\bINSERT INTO\b|\brelation "|\bTypeError\b/.test(message)) {
    return `the message shows internals: ${message.slice(0, 120)}`;
  }
  return undefined;
}

/** Throws with the reason (and `what`) unless this reply is an error of the contract. */
export function expectContractError(status: number, body: unknown, what: string, headers?: Headers): void {
  const violation = envelopeViolation(status, body, headers);
  if (violation !== undefined) {
    throw new Error(
      `not the contract's error envelope (${violation}) for ${what}: ${status} ${String(JSON.stringify(body)).slice(0, 300)}`,
    );
  }
}
