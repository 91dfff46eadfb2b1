import {
  Body,
  Controller,
  Delete,
  Get,
  Headers,
  HttpCode,
  Inject,
  Param,
  Post,
  Query,
  Res,
} from '@nestjs/common';
import type { Response } from 'express';
import type { ApiKeyPrincipal } from '../api-keys/api-keys.service.js';
import { Principal, RequireScopes } from '../auth/auth.decorators.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { CompactionService, type CompactionObject } from './compaction.service.js';
import { parseCompactResponse } from './dto/compact-response.dto.js';
import { parseCreateResponse, parseUserHeaders } from './dto/create-response.dto.js';
import { ListInputItemsQueryDto } from './dto/list-input-items.dto.js';
import type { InputItemList } from './input-item-view.js';
import type { ResponseObject } from './response-view.js';
import { ResponsesService, type ResponseDeleted } from './responses.service.js';
import { SseWriter } from './streaming/sse-writer.js';

type RequestHeaders = Record<string, string | string[] | undefined>;

@Controller('v1/responses')
export class ResponsesController {
  constructor(
    private readonly responses: ResponsesService,
    private readonly compaction: CompactionService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post()
  @RequireScopes('assistant')
  async create(
    @Principal() principal: ApiKeyPrincipal,
    @Body() body: unknown,
    @Headers() headers: RequestHeaders,
    @Res() res: Response,
  ): Promise<void> {
    const user = parseUserHeaders(headers);
    const request = parseCreateResponse(body);
    const turn = await this.responses.prepare(principal, request, user);
    const signal = abortWhenClientLeaves(res);
    if (request.stream) {
      const writer = new SseWriter(res, this.config.streaming.heartbeatMs);
      await this.responses.stream(turn, writer, signal, {
        status: wantsStatusEvents(headers),
        // OpenAI's SDKs know the reasoning events by their own names; others get the specification's.
        reasoning:
          headers['x-stainless-lang'] === undefined ? 'response.reasoning' : 'response.reasoning_text',
      });
    } else {
      res.status(200).json(await this.responses.respond(turn, signal));
    }
  }

  @Post('compact')
  @HttpCode(200)
  @RequireScopes('assistant')
  compact(
    @Principal() principal: ApiKeyPrincipal,
    @Body() body: unknown,
    @Headers() headers: RequestHeaders,
  ): Promise<CompactionObject> {
    const { userId } = parseUserHeaders(headers);
    return this.compaction.compact(principal, parseCompactResponse(body), userId);
  }

  @Get(':id')
  @RequireScopes('assistant')
  find(@Principal() principal: ApiKeyPrincipal, @Param('id') id: string): Promise<ResponseObject> {
    return this.responses.find(principal, id);
  }

  @Get(':id/input_items')
  @RequireScopes('assistant')
  inputItems(
    @Principal() principal: ApiKeyPrincipal,
    @Param('id') id: string,
    @Headers() headers: RequestHeaders,
    @Query() query: ListInputItemsQueryDto,
  ): Promise<InputItemList> {
    const { userId } = parseUserHeaders(headers);
    const { after, limit, order } = query;
    return this.responses.inputItems(principal, id, userId, { after: after ?? null, limit, order });
  }

  @Delete(':id')
  @RequireScopes('assistant')
  delete(
    @Principal() principal: ApiKeyPrincipal,
    @Param('id') id: string,
    @Headers() headers: RequestHeaders,
  ): Promise<ResponseDeleted> {
    return this.responses.delete(principal, id, parseUserHeaders(headers).userId);
  }
}

/** Aborts the turn (and so the upstream call) as soon as the client goes away. */
function abortWhenClientLeaves(res: Response): AbortSignal {
  const controller = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}

/**
 * `response.status` is rejected as unknown by the official SDK's stream helper (6.45+), so it
 * is left out for requests carrying the SDK's `x-stainless-lang`, unless the caller asks.
 */
function wantsStatusEvents(headers: RequestHeaders): boolean {
  const choice = headers['x-switchboard-events'];
  if (choice === 'all') return true;
  if (choice === 'standard') return false;
  return headers['x-stainless-lang'] === undefined;
}
