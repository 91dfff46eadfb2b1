import {
  AssistantFilterQuery,
  encodeCursor,
  IssuedCursor,
  PageLimit,
  parsePrefixedUuid,
  UUID,
  type CursorFormat,
} from '../../common/http/request-params.js';
import type { ConversationCursor, MessageCursor } from '../../responses/store/chat-history.repository.js';

/**
 * Query parameters of the chat-history endpoints, validated by the global pipe. Both lists are
 * keyset-paginated (PageQuery): `limit` rows per page and an opaque `after` cursor that the
 * previous page returned in its `x-next-cursor` header.
 */
export type { PageQuery } from '../../common/http/request-params.js';

// The cursors are positions in the turn store's keyset orders, defined beside its queries.
export type { ConversationCursor, MessageCursor } from '../../responses/store/chat-history.repository.js';

export const CONVERSATION_PAGE = { default: 20, max: 100 } as const;
export const MESSAGE_PAGE = { default: 100, max: 1000 } as const;

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const MAX_INT = 2_147_483_647;

const CONVERSATION_CURSOR: CursorFormat<ConversationCursor> = {
  parts: (cursor) => [cursor.updatedAt, cursor.id],
  position: ([updatedAt, id, ...rest]) =>
    rest.length === 0 &&
    TIMESTAMP.test(updatedAt) &&
    !Number.isNaN(Date.parse(updatedAt)) &&
    UUID.test(id ?? '')
      ? { updatedAt, id: id.toLowerCase() }
      : null,
};

const MESSAGE_CURSOR: CursorFormat<MessageCursor> = {
  parts: (cursor) => [cursor.depth, cursor.position],
  position: (parts) => {
    const [depth, position] = parts.map((part) => (/^\d{1,10}$/.test(part) ? Number(part) : NaN));
    const valid =
      parts.length === 2 && depth >= 1 && depth <= MAX_INT && position >= 0 && position <= MAX_INT;
    return valid ? { depth, position } : null;
  },
};

/** GET /v1/chat/history/conversations */
export class ConversationListQueryDto extends AssistantFilterQuery {
  @PageLimit(CONVERSATION_PAGE.max)
  limit: number = CONVERSATION_PAGE.default;

  @IssuedCursor(CONVERSATION_CURSOR)
  after?: ConversationCursor;
}

/** GET /v1/chat/history/conversations/:id/messages */
export class MessageListQueryDto {
  @PageLimit(MESSAGE_PAGE.max)
  limit: number = MESSAGE_PAGE.default;

  @IssuedCursor(MESSAGE_CURSOR)
  after?: MessageCursor;
}

export function encodeConversationCursor(cursor: ConversationCursor): string {
  return encodeCursor(cursor, CONVERSATION_CURSOR);
}

export function encodeMessageCursor(cursor: MessageCursor): string {
  return encodeCursor(cursor, MESSAGE_CURSOR);
}

/**
 * Conversation ids are bare UUIDs (the Response object's `conversation.id`); the Conversations
 * API's `conv_<uuid>` names the same one. Anything else names no conversation: null, which the
 * caller answers with the same 404 as a missing one.
 */
export function parseConversationId(raw: string): string | null {
  return parsePrefixedUuid(raw, 'conv_', true);
}
