import { Controller, Get, Headers, Inject, Param, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { ApiKeyPrincipal } from '../api-keys/api-keys.service.js';
import { Principal, RequireScopes } from '../auth/auth.decorators.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { requireUserId } from '../common/http/request-params.js';
import { ChatHistoryService, type HistoryConversation } from './chat-history.service.js';
import type { StoredMessage } from '../responses/store/chat-history.repository.js';
import { ConversationListQueryDto, MessageListQueryDto } from './dto/chat-history-query.dto.js';

type RequestHeaders = Record<string, string | string[] | undefined>;

/** Spec 2.5. `id` is the bare UUID the Response object shows as `conversation.id`. */
export interface ConversationView {
  id: string;
  title: string;
  isActive: boolean;
  createdAt: string;
  updatedAt: string;
  assistantId: string;
}

/** Spec 2.6. */
export interface MessageView {
  id: string;
  role: 'user' | 'assistant';
  content: string;
  createdAt: string;
}

function toConversationView(conversation: HistoryConversation): ConversationView {
  return {
    id: conversation.id,
    title: conversation.title,
    isActive: conversation.isActive,
    createdAt: conversation.createdAt.toISOString(),
    updatedAt: conversation.updatedAt.toISOString(),
    assistantId: `asst_${conversation.assistantId}`,
  };
}

function toMessageView(message: Omit<StoredMessage, 'cursor'>): MessageView {
  return {
    id: `msg_${message.id}`,
    role: message.role,
    content: message.content,
    createdAt: message.createdAt.toISOString(),
  };
}

/**
 * The end user's chat history (spec 4.2, 4.3), for the user named by `x-user-id`. The body stays
 * the JSON array the contract gives; a page that is not the last one carries its continuation in
 * headers: `x-next-cursor` (pass it as `after`) and `Link: <…>; rel="next"`.
 */
@Controller('v1/chat/history/conversations')
@RequireScopes('user')
export class ChatHistoryController {
  constructor(
    private readonly history: ChatHistoryService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  async list(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Query() query: ConversationListQueryDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<ConversationView[]> {
    const userId = requireUserId(headers);
    const page = await this.history.listConversations(
      principal.organizationId,
      userId,
      query.assistant_id ?? null,
      { limit: query.limit, after: query.after ?? null },
    );
    this.announceNextPage(req, res, page.nextCursor);
    return page.items.map(toConversationView);
  }

  @Get(':id/messages')
  async messages(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Query() query: MessageListQueryDto,
    @Param('id') id: string,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<MessageView[]> {
    const userId = requireUserId(headers);
    const page = await this.history.listMessages(principal.organizationId, userId, id, {
      limit: query.limit,
      after: query.after ?? null,
    });
    this.announceNextPage(req, res, page.nextCursor);
    return page.items.map(toMessageView);
  }

  /** The same request with `after` set to the cursor, absolute when PUBLIC_BASE_URL is known. */
  private announceNextPage(req: Request, res: Response, cursor: string | null): void {
    if (cursor === null) return;
    const next = new URL(req.originalUrl, 'http://placeholder');
    next.searchParams.set('after', cursor);
    res.setHeader('x-next-cursor', cursor);
    res.setHeader(
      'Link',
      `<${this.config.server.publicBaseUrl ?? ''}${next.pathname}${next.search}>; rel="next"`,
    );
  }
}
