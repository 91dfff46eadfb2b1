import { ApiError } from '../../common/errors/error-catalogue.js';
import { parsePrefixedUuid } from '../../common/http/request-params.js';
import { AUTO_CHUNKING, STATIC_CHUNK_LIMITS, type ChunkingStrategy } from '../ingestion/chunking.js';

/**
 * The JSON bodies of the Vector Stores API, parsed by hand (as POST /v1/responses is): their
 * fields are unions (`chunking_strategy`, `expires_after: null`, attribute values) that the
 * refusals must name precisely. Unknown fields are refused by name.
 */
export type Body = Record<string, unknown>;

/** A value of a vector store file's `attributes`. */
export type AttributeValue = string | number | boolean;

export const parseVectorStoreId = (raw: string): string | null => parsePrefixedUuid(raw, 'vs_', false);
export const toVectorStoreId = (id: string): string => `vs_${id}`;
export const parseBatchId = (raw: string): string | null => parsePrefixedUuid(raw, 'vsfb_', false);
export const toBatchId = (id: string): string => `vsfb_${id}`;

const MAX_ATTRIBUTES = 16;
const MAX_METADATA = 16;

export function refuse(message: string): never {
  throw new ApiError('invalid_request', message);
}

export const isObject = (value: unknown): value is Body =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export const absent = (value: unknown): value is null | undefined => value === undefined || value === null;

/** The body as an object whose every field is one of `known`. */
export function bodyOf(raw: unknown, known: string[]): Body {
  if (!isObject(raw)) refuse('The request body must be a JSON object');
  for (const key of Object.keys(raw)) if (!known.includes(key)) refuse(`Unknown parameter: ${key}`);
  return raw;
}

export function optionalString(body: Body, key: string, max: number): string | undefined {
  const value = body[key];
  if (absent(value)) return undefined;
  if (typeof value !== 'string' || value.length > max)
    refuse(`${key} must be a string of at most ${max} characters`);
  return value;
}

export function parseMetadata(raw: unknown): Record<string, string> {
  if (!isObject(raw)) refuse('metadata must be an object of string values');
  const entries = Object.entries(raw);
  if (entries.length > MAX_METADATA) refuse(`metadata may have at most ${MAX_METADATA} keys`);
  for (const [key, value] of entries) {
    if (key.length > 64) refuse('metadata keys may be at most 64 characters');
    if (typeof value !== 'string' || value.length > 512)
      refuse(`metadata.${key} must be a string of at most 512 characters`);
  }
  return raw as Record<string, string>;
}

/** `{anchor: "last_active_at", days: 1..365}`; null (on update) removes it. */
export function parseExpiresAfter(raw: unknown): number {
  if (!isObject(raw) || raw.anchor !== 'last_active_at')
    refuse('expires_after.anchor must be "last_active_at"');
  const days = raw.days;
  if (typeof days !== 'number' || !Number.isInteger(days) || days < 1 || days > 365) {
    refuse('expires_after.days must be an integer from 1 to 365');
  }
  for (const key of Object.keys(raw))
    if (key !== 'anchor' && key !== 'days') refuse(`Unknown parameter: expires_after.${key}`);
  return days;
}

/** `auto` (800 tokens, 400 overlap) or `static` with 100–4096 tokens and an overlap of at most half. */
export function parseChunkingStrategy(raw: unknown, path = 'chunking_strategy'): ChunkingStrategy {
  if (absent(raw)) return AUTO_CHUNKING;
  if (!isObject(raw)) refuse(`${path} must be an object`);
  if (raw.type === 'auto') return AUTO_CHUNKING;
  if (raw.type !== 'static') refuse(`${path}.type must be "auto" or "static"`);
  const settings = raw.static;
  if (!isObject(settings)) refuse(`${path}.static must be an object`);
  const size = settings.max_chunk_size_tokens;
  const overlap = settings.chunk_overlap_tokens;
  const { min, max } = STATIC_CHUNK_LIMITS;
  if (typeof size !== 'number' || !Number.isInteger(size) || size < min || size > max) {
    refuse(`${path}.static.max_chunk_size_tokens must be an integer from ${min} to ${max}`);
  }
  if (typeof overlap !== 'number' || !Number.isInteger(overlap) || overlap < 0 || overlap > size / 2) {
    refuse(`${path}.static.chunk_overlap_tokens must be an integer from 0 to half of max_chunk_size_tokens`);
  }
  return { maxChunkSizeTokens: size, chunkOverlapTokens: overlap };
}

/** At most 16 keys (of at most 64 characters), each a string (≤ 512), a number or a boolean. */
export function parseAttributes(raw: unknown, path = 'attributes'): Record<string, AttributeValue> {
  if (absent(raw)) return {};
  if (!isObject(raw)) refuse(`${path} must be an object`);
  const entries = Object.entries(raw);
  if (entries.length > MAX_ATTRIBUTES)
    refuse(`${path} may have at most ${MAX_ATTRIBUTES} keys (got ${entries.length})`);
  for (const [key, value] of entries) {
    if (key.length > 64) refuse(`${path} keys may be at most 64 characters`);
    const ok =
      (typeof value === 'string' && value.length <= 512) ||
      typeof value === 'boolean' ||
      (typeof value === 'number' && Number.isFinite(value));
    if (!ok) refuse(`${path}.${key} must be a string of at most 512 characters, a number or a boolean`);
  }
  return raw as Record<string, AttributeValue>;
}

/** A `file-<uuid>` id of a body, as the bare uuid; null names no file (so: not found). */
export function fileIdOf(raw: unknown, path: string): string | null {
  if (typeof raw !== 'string') refuse(`${path} must be a file id`);
  return parsePrefixedUuid(raw, 'file-', false);
}

/** `limit` (1–100, default 20), `order`, `after`; `before` is refused by name (not built). */
export function parseListQuery(
  query: Record<string, unknown>,
  extra: string[] = [],
): { limit: number; order: 'asc' | 'desc'; after: string | null } {
  for (const key of Object.keys(query)) {
    if (key === 'before') refuse('before is not supported: page forward with after');
    if (!['limit', 'order', 'after', ...extra].includes(key)) refuse(`Unknown parameter: ${key}`);
  }
  let limit = 20;
  if (query.limit !== undefined) {
    limit = Number(query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100)
      refuse('limit must be an integer from 1 to 100');
  }
  const order: unknown = query.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc') refuse('order must be "asc" or "desc"');
  const after = query.after;
  if (after !== undefined && typeof after !== 'string') refuse('after must be a single id');
  return { limit, order, after: after ?? null };
}
