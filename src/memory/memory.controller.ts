import { Controller, Delete, Get, Headers, HttpCode, Param, Post, Query } from '@nestjs/common';
import type { ApiKeyPrincipal } from '../api-keys/api-keys.service.js';
import { Principal, RequireScopes } from '../auth/auth.decorators.js';
import { AssistantFilterQuery, requireUserId } from '../common/http/request-params.js';
import { MemoryItemParams, MemoryListQueryDto } from './dto/memory-query.dto.js';
import type { StoredMemoryItem } from './memory.repository.js';
import { MemoryService } from './memory.service.js';

type RequestHeaders = Record<string, string | string[] | undefined>;

export interface MemoryItemView {
  id: string;
  assistantId: string;
  content: string;
  createdAt: string;
}

export interface MemoryListView {
  object: 'list';
  data: MemoryItemView[];
  hasMore: boolean;
  /** Pass as `after` for the next page; null on the last page. */
  nextCursor: string | null;
  optedOut: boolean;
}

function toView(item: StoredMemoryItem): MemoryItemView {
  return {
    id: `mem_${item.id}`,
    assistantId: `asst_${item.assistantId}`,
    content: item.content,
    createdAt: item.createdAt.toISOString(),
  };
}

const assistantView = (assistantId: string | null) => (assistantId === null ? null : `asst_${assistantId}`);

/**
 * The end user's view of what assistants remember (decisions.md "Memory"): the user named by
 * `x-user-id`, optionally narrowed to one assistant by `assistant_id`. Nothing here creates items.
 */
@Controller('v1/memory')
@RequireScopes('user')
export class MemoryController {
  constructor(private readonly memory: MemoryService) {}

  @Get()
  async list(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Query() query: MemoryListQueryDto,
  ): Promise<MemoryListView> {
    const userId = requireUserId(headers);
    const page = await this.memory.list(principal.organizationId, userId, query.assistant_id ?? null, {
      limit: query.limit,
      after: query.after ?? null,
    });
    return {
      object: 'list',
      data: page.items.map(toView),
      hasMore: page.hasMore,
      nextCursor: page.nextCursor,
      optedOut: page.optedOut,
    };
  }

  @Delete()
  async deleteAll(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Query() query: AssistantFilterQuery,
  ): Promise<{ deleted: number }> {
    const userId = requireUserId(headers);
    return {
      deleted: await this.memory.deleteAll(principal.organizationId, userId, query.assistant_id ?? null),
    };
  }

  @Post('opt-out')
  @HttpCode(200)
  async optOut(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Query() query: AssistantFilterQuery,
  ): Promise<{ optedOut: true; assistantId: string | null }> {
    const userId = requireUserId(headers);
    const assistantId = query.assistant_id ?? null;
    await this.memory.optOut(principal.organizationId, userId, assistantId);
    return { optedOut: true, assistantId: assistantView(assistantId) };
  }

  // Declared before ':itemId' so that "opt-out" is never taken for an item id.
  @Delete('opt-out')
  async optIn(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Query() query: AssistantFilterQuery,
  ): Promise<{ optedOut: boolean; assistantId: string | null }> {
    const userId = requireUserId(headers);
    const assistantId = query.assistant_id ?? null;
    const optedOut = await this.memory.optIn(principal.organizationId, userId, assistantId);
    return { optedOut, assistantId: assistantView(assistantId) };
  }

  @Delete(':itemId')
  @HttpCode(204)
  async deleteOne(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Query() query: AssistantFilterQuery,
    @Param() { itemId }: MemoryItemParams,
  ): Promise<void> {
    const userId = requireUserId(headers);
    await this.memory.deleteOne(principal.organizationId, userId, itemId, query.assistant_id ?? null);
  }
}
