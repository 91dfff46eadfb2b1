import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ApiError } from '../common/errors/error-catalogue.js';
import { assertUnderQuota } from '../common/errors/quota.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { branchItems, itemMessages, type ConversationItem } from '../responses/conversation-items.js';
import { parseInput } from '../responses/dto/input-items.parser.js';
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

/** Items as the responses parser reads them. */
export type ParsedItems = ReturnType<typeof parseInput>;

/**
 * Writes items into a conversation as a turn without a model call (the Conversations API's
 * create and add items), so the next turn's model sees them, in order: the items checked as a
 * turn's input is, within the per-conversation quota, then stored with their chat-history messages.
 */
@Injectable()
export class ConversationItemWriter {
  constructor(
    private readonly store: ConversationStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The items, checked as a turn's input is (its messages name `items`). */
  parse(raw: unknown[]): ParsedItems {
    return parseItems(raw);
  }

  /** Whether there is a per-conversation item quota: a caller counts the stored items only then. */
  get quotaApplies(): boolean {
    return this.config.quotas.itemsPerConversation > 0;
  }

  /** 409 quota_exceeded unless the last of `adding` new items after `stored` is still under the quota. */
  assertRoom(stored: number, adding: number): void {
    const quota = this.config.quotas.itemsPerConversation;
    if (quota === 0) return;
    assertUnderQuota(stored + adding - 1, quota, 'items in one conversation', 'QUOTA_ITEMS_PER_CONVERSATION');
  }

  /** Stores the items as a turn of the conversation, in `manager`'s transaction; returns them as items. */
  async append(
    manager: EntityManager,
    owner: ConversationOwner,
    conversation: StoredConversationRecord,
    items: ParsedItems,
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
function parseItems(raw: unknown[]): ParsedItems {
  let items: ParsedItems;
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
