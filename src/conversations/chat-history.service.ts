import { Inject, Injectable } from '@nestjs/common';
import { AssistantsService } from '../assistants/assistants.service.js';
import { ApiError } from '../common/errors/error-catalogue.js';
import { keysetPage } from '../database/keyset.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import {
  ChatHistoryRepository,
  type StoredConversation,
  type StoredMessage,
} from '../responses/store/chat-history.repository.js';
import {
  encodeConversationCursor,
  encodeMessageCursor,
  parseConversationId,
  type ConversationCursor,
  type MessageCursor,
  type PageQuery,
} from './dto/chat-history-query.dto.js';

export interface HistoryPage<T> {
  items: T[];
  /** Pass as `after` for the next page; null on the last page. */
  nextCursor: string | null;
}

export interface HistoryConversation extends Omit<StoredConversation, 'cursor'> {
  isActive: boolean;
}

/** A user's own conversations and the messages of each (spec 4.2, 4.3); read-only. */
@Injectable()
export class ChatHistoryService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly repository: ChatHistoryRepository,
    private readonly assistants: AssistantsService,
  ) {}

  async listConversations(
    organizationId: string,
    userId: string,
    assistantId: string | null,
    query: PageQuery<ConversationCursor>,
  ): Promise<HistoryPage<HistoryConversation>> {
    // As on /v1/memory: narrowing to an assistant the organization does not have is a 404.
    if (assistantId !== null && !(await this.assistants.find(organizationId, assistantId))) {
      throw new ApiError('assistant_not_found', 'No assistant with that id');
    }
    // One row more than asked tells whether another page exists.
    const rows = await this.repository.listForUser(
      organizationId,
      userId,
      assistantId,
      query.after,
      query.limit + 1,
    );
    const now = Date.now();
    return page(rows, query.limit, encodeConversationCursor, ({ cursor: _cursor, ...conversation }) => ({
      ...conversation,
      // Active until idle for longer than CONVERSATION_IDLE_HOURS; a new turn makes it active again.
      isActive: now - conversation.updatedAt.getTime() <= this.config.conversations.idleAfterMs,
    }));
  }

  /** Another user's or organization's conversation, or an anonymous one, is as absent as none. */
  async listMessages(
    organizationId: string,
    userId: string,
    rawConversationId: string,
    query: PageQuery<MessageCursor>,
  ): Promise<HistoryPage<Omit<StoredMessage, 'cursor'>>> {
    const id = parseConversationId(rawConversationId);
    const conversation = id ? await this.repository.findForUser(organizationId, userId, id) : null;
    if (!conversation) throw new ApiError('conversation_not_found', 'No conversation with that id');
    if (conversation.lastResponseId === null) return { items: [], nextCursor: null };
    const rows = await this.repository.listBranchMessages(
      organizationId,
      conversation.id,
      conversation.lastResponseId,
      query.after,
      query.limit + 1,
    );
    return page(rows, query.limit, encodeMessageCursor, ({ cursor: _cursor, ...message }) => message);
  }
}

function page<Row extends { cursor: Cursor }, Cursor, Item>(
  rows: Row[],
  limit: number,
  encode: (cursor: Cursor) => string,
  toItem: (row: Row) => Item,
): HistoryPage<Item> {
  const { items, next } = keysetPage(rows, limit);
  return { items: items.map(toItem), nextCursor: next ? encode(next.cursor) : null };
}
