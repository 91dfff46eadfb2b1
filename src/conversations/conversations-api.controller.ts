import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import type { Request } from 'express';
import type { ApiKeyPrincipal } from '../api-keys/api-keys.service.js';
import { Principal, RequireScopes } from '../auth/auth.decorators.js';
import { ApiError } from '../common/errors/error-catalogue.js';
import { optionalUserId } from '../common/http/request-params.js';
import type { ConversationItem } from '../responses/conversation-items.js';
import { ListInputItemsQueryDto } from '../responses/dto/list-input-items.dto.js';
import type { StoredConversationRecord } from '../responses/store/conversation-store.repository.js';
import type { ConversationOwner } from './conversation-item-writer.js';
import { ConversationsApiService } from './conversations-api.service.js';
import {
  checkMetadata,
  CreateConversationDto,
  CreateItemsDto,
  refuseInclude,
  UpdateConversationDto,
} from './dto/conversations-api.dto.js';

type RequestHeaders = Record<string, string | string[] | undefined>;

/** OpenAI's Conversation object; the id is `conv_<uuid>`, the UUID being chat history's id. */
export interface ConversationObject {
  id: string;
  object: 'conversation';
  created_at: number;
  metadata: Record<string, string>;
}

export interface ItemList {
  object: 'list';
  data: ConversationItem[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

function conversationObject(conversation: StoredConversationRecord): ConversationObject {
  return {
    id: `conv_${conversation.id}`,
    object: 'conversation',
    created_at: Math.floor(conversation.createdAt.getTime() / 1000),
    metadata: conversation.metadata,
  };
}

function itemList(items: ConversationItem[], hasMore: boolean): ItemList {
  return {
    object: 'list',
    data: items,
    first_id: items[0]?.id ?? null,
    last_id: items[items.length - 1]?.id ?? null,
    has_more: hasMore,
  };
}

function ownerOf(principal: ApiKeyPrincipal, headers: RequestHeaders): ConversationOwner {
  return { organizationId: principal.organizationId, userId: optionalUserId(headers) };
}

/**
 * OpenAI's Conversations API on the conversations chat history shows. Owned as chat history owns
 * them: the key's organization and `x-user-id` (without it, anonymous conversations only).
 */
@Controller('v1/conversations')
@RequireScopes('user')
export class ConversationsApiController {
  constructor(private readonly conversations: ConversationsApiService) {}

  @Post()
  @HttpCode(200)
  async create(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Body() body: CreateConversationDto,
  ): Promise<ConversationObject> {
    const metadata = checkMetadata(body.metadata);
    const conversation = await this.conversations.create(ownerOf(principal, headers), body.items, metadata);
    return conversationObject(conversation);
  }

  @Get(':id')
  async retrieve(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Param('id') id: string,
  ): Promise<ConversationObject> {
    return conversationObject(await this.conversations.retrieve(ownerOf(principal, headers), id));
  }

  @Post(':id')
  @HttpCode(200)
  async update(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Param('id') id: string,
    @Body() body: UpdateConversationDto,
  ): Promise<ConversationObject> {
    if (body.metadata === undefined)
      throw new ApiError('missing_required_field', 'Missing required field: metadata');
    const metadata = checkMetadata(body.metadata);
    return conversationObject(await this.conversations.update(ownerOf(principal, headers), id, metadata));
  }

  @Delete(':id')
  async delete(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Param('id') id: string,
  ): Promise<{ id: string; object: 'conversation.deleted'; deleted: true }> {
    const deleted = await this.conversations.delete(ownerOf(principal, headers), id);
    return { id: `conv_${deleted}`, object: 'conversation.deleted', deleted: true };
  }

  @Get(':id/items')
  async listItems(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Param('id') id: string,
    @Query() query: ListInputItemsQueryDto,
  ): Promise<ItemList> {
    const page = await this.conversations.listItems(ownerOf(principal, headers), id, {
      after: query.after ?? null,
      limit: query.limit,
      order: query.order,
    });
    return itemList(page.items, page.hasMore);
  }

  @Post(':id/items')
  @HttpCode(200)
  async addItems(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Param('id') id: string,
    @Body() body: CreateItemsDto,
    @Req() req: Request,
  ): Promise<ItemList> {
    refuseInclude(req.query);
    if (body.items === undefined || body.items === null) {
      throw new ApiError('missing_required_field', 'Missing required field: items');
    }
    const items = await this.conversations.addItems(ownerOf(principal, headers), id, body.items);
    return itemList(items, false);
  }

  @Get(':id/items/:itemId')
  async retrieveItem(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Param('id') id: string,
    @Param('itemId') itemId: string,
    @Req() req: Request,
  ): Promise<ConversationItem> {
    refuseInclude(req.query);
    return this.conversations.retrieveItem(ownerOf(principal, headers), id, itemId);
  }

  @Delete(':id/items/:itemId')
  async deleteItem(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Param('id') id: string,
    @Param('itemId') itemId: string,
  ): Promise<ConversationObject> {
    return conversationObject(await this.conversations.deleteItem(ownerOf(principal, headers), id, itemId));
  }
}
