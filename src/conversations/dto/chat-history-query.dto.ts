import {
  cursorParts,
  encodeCursor,
  invalidCursor,
  parsePageLimit,
  parsePrefixedUuid,
  UUID,
} from '../../common/http/request-params.js';
import type { ConversationCursor, MessageCursor } from '../../responses/store/chat-history.repository.js';

/**
 * Query parameters of the chat-history endpoints, parsed by hand like the other DTOs. Both lists
 * are keyset-paginated: `limit` rows per page and an opaque `after` cursor that the previous page
 * returned in its `x-next-cursor` header.
 */
export interface PageQuery<Cursor> {
  limit: number;
  after: Cursor | null;
}

// The cursors are positions in the turn store's keyset orders, defined beside its queries.
export type { ConversationCursor, MessageCursor } from '../../responses/store/chat-history.repository.js';

export const CONVERSATION_PAGE = { default: 20, max: 100 } as const;
export const MESSAGE_PAGE = { default: 100, max: 1000 } as const;

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const MAX_INT = 2_147_483_647;

type Query = Record<string, unknown>;

export function parseConversationListQuery(query: Query): PageQuery<ConversationCursor> {
  const limit = parsePageLimit(query, CONVERSATION_PAGE);
  const parts = cursorParts(query, 2);
  if (parts === null) return { limit, after: null };
  const [updatedAt, id] = parts;
  if (!TIMESTAMP.test(updatedAt) || Number.isNaN(Date.parse(updatedAt)) || !UUID.test(id)) {
    throw invalidCursor();
  }
  return { limit, after: { updatedAt, id: id.toLowerCase() } };
}

export function parseMessageListQuery(query: Query): PageQuery<MessageCursor> {
  const limit = parsePageLimit(query, MESSAGE_PAGE);
  const parts = cursorParts(query, 2);
  if (parts === null) return { limit, after: null };
  const [depth, position] = parts.map((part) => (/^\d{1,10}$/.test(part) ? Number(part) : NaN));
  if (!(depth >= 1 && depth <= MAX_INT && position >= 0 && position <= MAX_INT)) throw invalidCursor();
  return { limit, after: { depth, position } };
}

export function encodeConversationCursor(cursor: ConversationCursor): string {
  return encodeCursor([cursor.updatedAt, cursor.id]);
}

export function encodeMessageCursor(cursor: MessageCursor): string {
  return encodeCursor([cursor.depth, cursor.position]);
}

/**
 * Conversation ids are bare UUIDs (the Response object's `conversation.id`); the Conversations
 * API's `conv_<uuid>` names the same one. Anything else names no conversation: null, which the
 * caller answers with the same 404 as a missing one.
 */
export function parseConversationId(raw: string): string | null {
  return parsePrefixedUuid(raw, 'conv_', true);
}
