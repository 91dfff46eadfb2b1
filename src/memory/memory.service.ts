import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AssistantsService } from '../assistants/assistants.service.js';
import { ApiError } from '../common/errors/error-catalogue.js';
import { keysetPage } from '../database/keyset.js';
import { encodeCursor, type MemoryListQuery } from './dto/memory-query.dto.js';
import { MemoryItemEntity } from './entities/memory-item.entity.js';
import { MemoryOptOutEntity } from './entities/memory-opt-out.entity.js';
import { MemoryRepository, type StoredMemoryItem } from './memory.repository.js';

/** Longest memory item, in characters; the model is told to shorten anything longer. */
export const MAX_MEMORY_ITEM_CHARS = 2000;

export type SaveRefusal = 'opted_out' | 'empty' | 'too_long';

export interface SaveResult {
  saved: boolean;
  id?: string;
  /** Why nothing was saved; worded for the model by the save_to_memory tool. */
  reason?: SaveRefusal;
}

export interface MemoryPage {
  items: StoredMemoryItem[];
  hasMore: boolean;
  nextCursor: string | null;
  optedOut: boolean;
}

@Injectable()
export class MemoryService {
  constructor(
    private readonly repository: MemoryRepository,
    private readonly assistants: AssistantsService,
  ) {}

  /**
   * The only way memory is written: the model's `save_to_memory` call on the generic path of a
   * turn with a user id. Refused when the user opted out of this assistant or of all of them
   * (checked in the same statement as the insert), and for empty or over-long text.
   */
  async saveFromModel(
    organizationId: string,
    userId: string,
    assistantId: string,
    content: string,
  ): Promise<SaveResult> {
    // PostgreSQL text cannot hold NUL; nothing a model means to remember contains one.
    const text = content.replaceAll('\u0000', '').trim();
    if (text.length === 0) return { saved: false, reason: 'empty' };
    if (characterCount(text) > MAX_MEMORY_ITEM_CHARS) return { saved: false, reason: 'too_long' };
    const result = await this.repository.saveUnlessOptedOut(
      Object.assign(new MemoryItemEntity(), {
        id: randomUUID(),
        organizationId,
        userId,
        assistantId,
        content: text,
        createdAt: new Date(),
      }),
    );
    if (result.optedOut || result.id === null) return { saved: false, reason: 'opted_out' };
    return { saved: true, id: result.id };
  }

  async list(
    organizationId: string,
    userId: string,
    assistantId: string | null,
    query: MemoryListQuery,
  ): Promise<MemoryPage> {
    await this.ensureAssistant(organizationId, assistantId);
    // One row more than asked tells whether another page exists.
    const rows = await this.repository.listPage(
      organizationId,
      userId,
      assistantId,
      query.after,
      query.limit + 1,
    );
    const { items, next } = keysetPage(rows, query.limit);
    return {
      items,
      hasMore: next !== null,
      nextCursor: next ? encodeCursor(next) : null,
      optedOut: await this.repository.isOptedOut(organizationId, userId, assistantId),
    };
  }

  async deleteAll(organizationId: string, userId: string, assistantId: string | null): Promise<number> {
    await this.ensureAssistant(organizationId, assistantId);
    return this.repository.deleteAll(organizationId, userId, assistantId);
  }

  /** Another user's or organization's item is exactly as absent as a missing one. */
  async deleteOne(
    organizationId: string,
    userId: string,
    id: string | null,
    assistantId: string | null,
  ): Promise<void> {
    await this.ensureAssistant(organizationId, assistantId);
    if (id === null || !(await this.repository.deleteOne(organizationId, userId, id, assistantId))) {
      throw new ApiError('memory_item_not_found', 'No memory item with that id');
    }
  }

  /** Stops loading and saving; existing items stay until deleted. */
  async optOut(organizationId: string, userId: string, assistantId: string | null): Promise<void> {
    await this.ensureAssistant(organizationId, assistantId);
    await this.repository.addOptOut(
      Object.assign(new MemoryOptOutEntity(), {
        id: randomUUID(),
        organizationId,
        userId,
        assistantId,
        createdAt: new Date(),
      }),
    );
  }

  /**
   * Undoes opt-outs: without an assistant every one of the user's; with one, that assistant's.
   * Returns whether memory is still off for the scope asked about (an opt-out of every
   * assistant outlives removing one assistant's).
   */
  async optIn(organizationId: string, userId: string, assistantId: string | null): Promise<boolean> {
    await this.ensureAssistant(organizationId, assistantId);
    await this.repository.removeOptOuts(organizationId, userId, assistantId);
    return assistantId === null ? false : this.repository.isOptedOut(organizationId, userId, assistantId);
  }

  private async ensureAssistant(organizationId: string, assistantId: string | null): Promise<void> {
    if (assistantId !== null && !(await this.assistants.find(organizationId, assistantId))) {
      throw new ApiError('assistant_not_found', 'No assistant with that id');
    }
  }
}

/** Code points, as PostgreSQL's char_length counts them for the context budget. */
export function characterCount(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}
