import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ApiError } from '../common/errors/error-catalogue.js';
import {
  branchItems,
  removeItem,
  type ConversationItem,
  type LocatedItem,
} from '../responses/conversation-items.js';
import { parseConversationId } from '../responses/dto/create-response.dto.js';
import type { ListInputItemsQuery } from '../responses/dto/list-input-items.dto.js';
import {
  ConversationStore,
  type StoredConversationRecord,
} from '../responses/store/conversation-store.repository.js';
import { ConversationItemWriter, type ConversationOwner } from './conversation-item-writer.js';

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
    private readonly writer: ConversationItemWriter,
  ) {}

  async create(
    owner: ConversationOwner,
    rawItems: unknown[] | null | undefined,
    metadata: Record<string, string>,
  ): Promise<StoredConversationRecord> {
    const items = rawItems && rawItems.length > 0 ? this.writer.parse(rawItems) : [];
    if (items.length > 0) this.writer.assertRoom(0, items.length);
    const now = new Date();
    return this.store.withTransaction(async (manager) => {
      const conversation = await this.store.create(
        manager,
        owner.organizationId,
        owner.userId,
        metadata,
        now,
      );
      if (items.length > 0) await this.writer.append(manager, owner, conversation, items, now);
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
    const items = this.writer.parse(rawItems);
    return this.inLockedConversation(owner, rawId, async (conversation, manager) => {
      // Room for every new item, counted in the locked conversation.
      if (this.writer.quotaApplies)
        this.writer.assertRoom((await this.items(owner, conversation, manager)).length, items.length);
      return this.writer.append(manager, owner, conversation, items, new Date());
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
}

function notFound(rawId: string): ApiError {
  return new ApiError('conversation_not_found', `No conversation ${rawId}`);
}

function itemNotFound(itemId: string): ApiError {
  return new ApiError('item_not_found', `No item ${itemId} in this conversation`);
}
