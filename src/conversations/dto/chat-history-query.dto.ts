import { ApiError } from '../../common/errors/error-catalogue.js';

/**
 * Query parameters of the chat-history endpoints, parsed by hand like the other DTOs. Both lists
 * are keyset-paginated: `limit` rows per page and an opaque `after` cursor that the previous page
 * returned in its `x-next-cursor` header.
 */
export interface PageQuery<Cursor> {
  limit: number;
  after: Cursor | null;
}

/** A position in the conversation list (most recently updated first). */
export interface ConversationCursor {
  /** `updated_at` at microsecond precision, as PostgreSQL stores it, so the position is exact. */
  updatedAt: string;
  id: string;
}

/** A position on a branch (oldest first): the turn's depth, then the message's place in it. */
export interface MessageCursor {
  depth: number;
  position: number;
}

export const CONVERSATION_PAGE = { default: 20, max: 100 } as const;
export const MESSAGE_PAGE = { default: 100, max: 1000 } as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const MAX_INT = 2_147_483_647;

type Query = Record<string, unknown>;

function single(query: Query, name: string): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string')
    throw new ApiError('invalid_request', `Query parameter ${name} must be given once`);
  return value;
}

function parseLimit(query: Query, bounds: { default: number; max: number }): number {
  const raw = single(query, 'limit');
  if (raw === undefined) return bounds.default;
  const limit = /^\d{1,5}$/.test(raw) ? Number(raw) : NaN;
  if (!(limit >= 1 && limit <= bounds.max)) {
    throw new ApiError('invalid_request', `limit must be a whole number from 1 to ${bounds.max}`);
  }
  return limit;
}

function afterParameter(query: Query): string | null {
  const raw = single(query, 'after');
  return raw === undefined || raw === '' ? null : raw;
}

function invalidCursor(): ApiError {
  return new ApiError('invalid_request', 'after is not a cursor this endpoint returned');
}

function decodeParts(raw: string, count: number): string[] {
  const parts = Buffer.from(raw, 'base64url').toString('utf8').split('|');
  if (parts.length !== count) throw invalidCursor();
  return parts;
}

export function parseConversationListQuery(query: Query): PageQuery<ConversationCursor> {
  const limit = parseLimit(query, CONVERSATION_PAGE);
  const raw = afterParameter(query);
  if (raw === null) return { limit, after: null };
  const [updatedAt, id] = decodeParts(raw, 2);
  if (!TIMESTAMP.test(updatedAt) || Number.isNaN(Date.parse(updatedAt)) || !UUID.test(id)) {
    throw invalidCursor();
  }
  return { limit, after: { updatedAt, id: id.toLowerCase() } };
}

export function parseMessageListQuery(query: Query): PageQuery<MessageCursor> {
  const limit = parseLimit(query, MESSAGE_PAGE);
  const raw = afterParameter(query);
  if (raw === null) return { limit, after: null };
  const [depth, position] = decodeParts(raw, 2).map((part) => (/^\d{1,10}$/.test(part) ? Number(part) : NaN));
  if (!(depth >= 1 && depth <= MAX_INT && position >= 0 && position <= MAX_INT)) throw invalidCursor();
  return { limit, after: { depth, position } };
}

/** Opaque to clients: base64url of the last row's sort key. */
export function encodeConversationCursor(cursor: ConversationCursor): string {
  return Buffer.from(`${cursor.updatedAt}|${cursor.id}`, 'utf8').toString('base64url');
}

export function encodeMessageCursor(cursor: MessageCursor): string {
  return Buffer.from(`${cursor.depth}|${cursor.position}`, 'utf8').toString('base64url');
}

/**
 * Conversation ids are bare UUIDs (the Response object's `conversation.id`). Anything else names
 * no conversation: null, which the caller answers with the same 404 as a missing one.
 */
export function parseConversationId(raw: string): string | null {
  return UUID.test(raw) ? raw.toLowerCase() : null;
}
