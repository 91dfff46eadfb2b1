import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ApiError } from '../common/errors/error-catalogue.js';
import { assertUnderQuota } from '../common/errors/quota.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import {
  branchItems,
  itemMessages,
  removeItem,
  type ConversationItem,
  type LocatedItem,
} from '../responses/conversation-items.js';
import { parseConversationId } from '../responses/dto/create-response.dto.js';
import { parseInput } from '../responses/dto/input-items.parser.js';
import type { ListInputItemsQuery } from '../responses/dto/list-input-items.dto.js';
import {
  ConversationStore,
  type StoredConversationRecord,
} from '../responses/store/conversation-store.repository.js';
import { conversationTitle, inputToTranscript } from '../turns/transcript.js';

/** Who is asking: the key's organization and the end user (`x-user-id`), null for anonymous. */
export interface ConversationOwner {
  organizationId: string;
  userId: string | null;
}

export interface ItemPage {
  items: ConversationItem[];
  hasMore: boolean;
}

/**
 * The Conversations API over the turn store: the same conversations chat history lists. Items
 * added here are a turn without a model call, so the next turn's model sees them, in order.
 */
@Injectable()
export class ConversationsApiService {
  constructor(
    private readonly store: ConversationStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(
    owner: ConversationOwner,
    rawItems: unknown[] | null | undefined,
    metadata: Record<string, string>,
  ): Promise<StoredConversationRecord> {
    const items = rawItems && rawItems.length > 0 ? parseItems(rawItems) : [];
    if (items.length > 0 && this.config.quotas.itemsPerConversation > 0) {
      const quota = this.config.quotas.itemsPerConversation;
      assertUnderQuota(items.length - 1, quota, 'items in one conversation', 'QUOTA_ITEMS_PER_CONVERSATION');
    }
    const now = new Date();
    return this.store.withTransaction(async (manager) => {
      const conversation = await this.store.create(
        manager,
        owner.organizationId,
        owner.userId,
        metadata,
        now,
      );
      if (items.length > 0) await this.append(manager, owner, conversation, items, now);
      return conversation;
    });
  }

  async retrieve(owner: ConversationOwner, rawId: string): Promise<StoredConversationRecord> {
    const id = parseConversationId(rawId);
    const conversation = id ? await this.store.find(owner.organizationId, owner.userId, id) : null;
    if (!conversation) throw notFound(rawId);
    return conversation;
  }

  async update(
    owner: ConversationOwner,
    rawId: string,
    metadata: Record<string, string>,
  ): Promise<StoredConversationRecord> {
    const id = parseConversationId(rawId);
    const conversation = id
      ? await this.store.updateMetadata(owner.organizationId, owner.userId, id, metadata)
      : null;
    if (!conversation) throw notFound(rawId);
    return conversation;
  }

  /** Deletes the conversation with its turns and chat-history messages; returns the bare id. */
  async delete(owner: ConversationOwner, rawId: string): Promise<string> {
    const id = parseConversationId(rawId);
    if (!id || !(await this.store.delete(owner.organizationId, owner.userId, id))) throw notFound(rawId);
    return id;
  }

  async addItems(owner: ConversationOwner, rawId: string, rawItems: unknown[]): Promise<ConversationItem[]> {
    const items = parseItems(rawItems);
    return this.inLockedConversation(owner, rawId, async (conversation, manager) => {
      const quota = this.config.quotas.itemsPerConversation;
      if (quota > 0) {
        // Room for every new item: the last of them must still be under the quota.
        const stored = (await this.items(owner, conversation, manager)).length;
        assertUnderQuota(
          stored + items.length - 1,
          quota,
          'items in one conversation',
          'QUOTA_ITEMS_PER_CONVERSATION',
        );
      }
      return this.append(manager, owner, conversation, items, new Date());
    });
  }

  /** One page of the current branch's items; `after` is an item id of the previous page. */
  async listItems(owner: ConversationOwner, rawId: string, query: ListInputItemsQuery): Promise<ItemPage> {
    const conversation = await this.retrieve(owner, rawId);
    const ordered = (await this.items(owner, conversation)).map((located) => located.item);
    if (query.order !== 'asc') ordered.reverse();
    let start = 0;
    if (query.after !== null) {
      const index = ordered.findIndex((item) => item.id === query.after);
      if (index < 0) throw new ApiError('invalid_request', 'after is not a cursor this endpoint returned');
      start = index + 1;
    }
    const limit = query.limit;
    return { items: ordered.slice(start, start + limit), hasMore: start + limit < ordered.length };
  }

  async retrieveItem(owner: ConversationOwner, rawId: string, itemId: string): Promise<ConversationItem> {
    const conversation = await this.retrieve(owner, rawId);
    const located = (await this.items(owner, conversation)).find((candidate) => candidate.item.id === itemId);
    if (!located) throw itemNotFound(itemId);
    return located.item;
  }

  /** Removes the item from the thread the model sees and from chat history; returns the conversation. */
  async deleteItem(
    owner: ConversationOwner,
    rawId: string,
    itemId: string,
  ): Promise<StoredConversationRecord> {
    return this.inLockedConversation(owner, rawId, async (conversation, manager) => {
      const located = (await this.items(owner, conversation, manager)).find(
        (candidate) => candidate.item.id === itemId,
      );
      const rewritten = located ? removeItem(located.turn, itemId) : null;
      if (!located || !rewritten) throw itemNotFound(itemId);
      await this.store.rewriteTurn(
        manager,
        owner.organizationId,
        conversation.id,
        located.turn.id,
        rewritten,
      );
      return conversation;
    });
  }

  /** Runs `work` in one transaction with the owner's conversation locked; 404 when they have no such conversation. */
  private async inLockedConversation<T>(
    owner: ConversationOwner,
    rawId: string,
    work: (conversation: StoredConversationRecord, manager: EntityManager) => Promise<T>,
  ): Promise<T> {
    const id = parseConversationId(rawId);
    if (!id) throw notFound(rawId);
    return this.store.withTransaction(async (manager) => {
      const conversation = await this.store.find(owner.organizationId, owner.userId, id, {
        manager,
        lock: true,
      });
      if (!conversation) throw notFound(rawId);
      return work(conversation, manager);
    });
  }

  private async items(
    owner: ConversationOwner,
    conversation: StoredConversationRecord,
    manager?: EntityManager,
  ): Promise<LocatedItem[]> {
    if (conversation.lastResponseId === null) return [];
    const turns = await this.store.branchTurns(
      owner.organizationId,
      conversation.id,
      conversation.lastResponseId,
      manager,
    );
    return branchItems(turns);
  }

  private async append(
    manager: EntityManager,
    owner: ConversationOwner,
    conversation: StoredConversationRecord,
    items: ReturnType<typeof parseInput>,
    now: Date,
  ): Promise<ConversationItem[]> {
    const messages = itemMessages(items);
    const firstUserText = messages.find((message) => message.role === 'user')?.content ?? '';
    const turnId = await this.store.appendItems(
      manager,
      owner.organizationId,
      owner.userId,
      conversation,
      {
        items,
        transcript: inputToTranscript(items),
        messages,
        title: conversationTitle(firstUserText),
      },
      now,
    );
    return branchItems([
      { id: turnId, assistantId: null, input: items, output: [], transcript: [], outputText: '' },
    ]).map((located) => located.item);
  }
}

/** The responses parser, its messages naming `items` instead of `input`. */
function parseItems(raw: unknown[]): ReturnType<typeof parseInput> {
  let items: ReturnType<typeof parseInput>;
  try {
    items = parseInput(raw);
  } catch (error) {
    if (error instanceof ApiError) {
      throw new ApiError(error.code, error.message.replace(/^input/, 'items'));
    }
    throw error;
  }
  // A turn fetches file_url parts and reads file_id parts for the model of its assistant; stored items do neither.
  const fetched = items.findIndex(
    (item) =>
      item.type === 'message' &&
      item.parts?.some((part) => part.type === 'input_file' && part.fileData === null),
  );
  if (fetched >= 0) {
    throw new ApiError(
      'invalid_request',
      `items[${fetched}]: input_file with file_url or file_id is not supported here; send file_data, or send the file as input of a turn`,
    );
  }
  return items;
}

function notFound(rawId: string): ApiError {
  return new ApiError('conversation_not_found', `No conversation ${rawId}`);
}

function itemNotFound(itemId: string): ApiError {
  return new ApiError('item_not_found', `No item ${itemId} in this conversation`);
}
