import { ApiError } from '../../common/errors/error-catalogue.js';

/** Headers and query parameters of the /v1/memory endpoints, parsed by hand like other DTOs. */
export interface MemoryListQuery {
  limit: number;
  after: MemoryCursor | null;
}

/** A position in the newest-first order: the last item a page showed. */
export interface MemoryCursor {
  createdAt: Date;
  id: string;
}

export const DEFAULT_MEMORY_PAGE = 20;
export const MAX_MEMORY_PAGE = 100;
const MAX_USER_ID_LENGTH = 256;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Headers = Record<string, string | string[] | undefined>;
type Query = Record<string, unknown>;

/** `x-user-id` is required here: memory always belongs to one end user. */
export function requireUserId(headers: Headers): string {
  const value = headers['x-user-id'];
  if (value === undefined) throw new ApiError('missing_required_field', 'Missing required header: x-user-id');
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_USER_ID_LENGTH) {
    throw new ApiError('invalid_request', `Header x-user-id must be 1 to ${MAX_USER_ID_LENGTH} characters`);
  }
  return value;
}

function single(query: Query, name: string): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string')
    throw new ApiError('invalid_request', `Query parameter ${name} must be given once`);
  return value;
}

/** The optional `assistant_id` narrowing: a bare UUID or `asst_<uuid>`, returned bare. */
export function parseAssistantFilter(query: Query): string | null {
  const raw = single(query, 'assistant_id');
  if (raw === undefined || raw === '') return null;
  const bare = raw.startsWith('asst_') ? raw.slice(5) : raw;
  if (!UUID.test(bare)) {
    throw new ApiError('invalid_request', 'assistant_id must be an assistant UUID, bare or as asst_<uuid>');
  }
  return bare.toLowerCase();
}

export function parseListQuery(query: Query): MemoryListQuery {
  const rawLimit = single(query, 'limit');
  let limit = DEFAULT_MEMORY_PAGE;
  if (rawLimit !== undefined) {
    limit = /^\d{1,4}$/.test(rawLimit) ? Number(rawLimit) : NaN;
    if (!(limit >= 1 && limit <= MAX_MEMORY_PAGE)) {
      throw new ApiError('invalid_request', `limit must be a whole number from 1 to ${MAX_MEMORY_PAGE}`);
    }
  }
  const rawAfter = single(query, 'after');
  return { limit, after: rawAfter === undefined || rawAfter === '' ? null : decodeCursor(rawAfter) };
}

/** `mem_<uuid>` (as listed) or the bare UUID; null for anything else, which names no item. */
export function parseMemoryItemId(raw: string): string | null {
  const bare = raw.startsWith('mem_') ? raw.slice(4) : raw;
  return UUID.test(bare) ? bare.toLowerCase() : null;
}

/**
 * Opaque to clients: base64url of the last item's creation time and id. A position rather than
 * an item id, so a page boundary survives that item's deletion.
 */
export function encodeCursor(cursor: MemoryCursor): string {
  return Buffer.from(`${cursor.createdAt.toISOString()}|${cursor.id}`, 'utf8').toString('base64url');
}

function decodeCursor(raw: string): MemoryCursor {
  const [time, id, extra] = Buffer.from(raw, 'base64url').toString('utf8').split('|');
  const createdAt = new Date(time ?? '');
  if (extra !== undefined || id === undefined || !UUID.test(id) || Number.isNaN(createdAt.getTime())) {
    throw new ApiError('invalid_request', 'after is not a cursor this endpoint returned');
  }
  return { createdAt, id: id.toLowerCase() };
}
