import { ApiError } from '../errors/error-catalogue.js';

/**
 * The pieces every hand-written DTO parser of the API shares: ids, the end-user header, and
 * keyset pagination (`limit`, and an opaque `after` cursor the previous page returned).
 */

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The longest end-user id (`x-user-id`, a claim's `userId`) the API accepts. */
export const MAX_USER_ID_LENGTH = 256;

type Headers = Record<string, string | string[] | undefined>;
type Query = Record<string, unknown>;

/** `<prefix><uuid>` (or, with `bareAllowed`, the UUID alone) → the bare lower-case UUID, or null. */
export function parsePrefixedUuid(raw: string, prefix: string, bareAllowed: boolean): string | null {
  const bare = raw.startsWith(prefix) ? raw.slice(prefix.length) : bareAllowed ? raw : '';
  return UUID.test(bare) ? bare.toLowerCase() : null;
}

/** For the endpoints where `x-user-id` is required: they always concern one end user. */
export function requireUserId(headers: Headers): string {
  const value = headers['x-user-id'];
  if (value === undefined) throw new ApiError('missing_required_field', 'Missing required header: x-user-id');
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_USER_ID_LENGTH) {
    throw new ApiError('invalid_request', `Header x-user-id must be 1 to ${MAX_USER_ID_LENGTH} characters`);
  }
  return value;
}

/** For the endpoints where `x-user-id` is optional: without it they reach anonymous data only. */
export function optionalUserId(headers: Headers): string | null {
  return headers['x-user-id'] === undefined ? null : requireUserId(headers);
}

/** A query parameter given at most once. */
export function singleQueryParam(query: Query, name: string): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string')
    throw new ApiError('invalid_request', `Query parameter ${name} must be given once`);
  return value;
}

/** The optional `assistant_id` narrowing: a bare UUID or `asst_<uuid>`, returned bare. */
export function parseAssistantFilter(query: Query): string | null {
  const raw = singleQueryParam(query, 'assistant_id');
  if (raw === undefined || raw === '') return null;
  const assistantId = parsePrefixedUuid(raw, 'asst_', true);
  if (!assistantId) {
    throw new ApiError('invalid_request', 'assistant_id must be an assistant UUID, bare or as asst_<uuid>');
  }
  return assistantId;
}

export function parsePageLimit(query: Query, bounds: { default: number; max: number }): number {
  const raw = singleQueryParam(query, 'limit');
  if (raw === undefined) return bounds.default;
  const limit = /^\d{1,5}$/.test(raw) ? Number(raw) : NaN;
  if (!(limit >= 1 && limit <= bounds.max)) {
    throw new ApiError('invalid_request', `limit must be a whole number from 1 to ${bounds.max}`);
  }
  return limit;
}

export function invalidCursor(): ApiError {
  return new ApiError('invalid_request', 'after is not a cursor this endpoint returned');
}

/** Opaque to clients: base64url of the last row's sort key, parts joined with `|`. */
export function encodeCursor(parts: (string | number)[]): string {
  return Buffer.from(parts.join('|'), 'utf8').toString('base64url');
}

/** The parts of the `after` cursor, or null without one; a cursor of another shape is a 400. */
export function cursorParts(query: Query, count: number): string[] | null {
  const raw = singleQueryParam(query, 'after');
  if (raw === undefined || raw === '') return null;
  const parts = Buffer.from(raw, 'base64url').toString('utf8').split('|');
  if (parts.length !== count) throw invalidCursor();
  return parts;
}
