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
import { ApiError } from '../common/errors/error-catalogue.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { BackgroundResponses } from './durable/background-responses.service.js';
import { ResumedStreams } from './durable/resumed-streams.service.js';
import { CompactionService, type CompactionObject } from './compaction.service.js';
import { parseUserHeaders } from './dto/create-response.dto.js';
import { parseCompactResponse } from './request-schema/compact-response.fields.js';
import { parseCreateResponse } from './request-schema/create-response.parser.js';
import { ListInputItemsQueryDto } from './dto/list-input-items.dto.js';
import type { InputItemList } from './input-item-view.js';
import type { ResponseObject } from './response-view.js';
import { ResponsesService, type ResponseDeleted } from './responses.service.js';
import type { EventStyle } from './streaming/response-recorder.js';
import { ClientDeparture } from './streaming/client-departure.js';
import { SseWriter } from './streaming/sse-writer.js';

type RequestHeaders = Record<string, string | string[] | undefined>;

@Controller('v1/responses')
export class ResponsesController {
  constructor(
    private readonly responses: ResponsesService,
    private readonly background: BackgroundResponses,
    private readonly resumed: ResumedStreams,
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
    const departure = new ClientDeparture(res);
    const signal = departure.signal;
    if (request.background) {
      // Stored events include `response.status` only when asked for: any client may resume them.
      const { response } = await this.background.create(turn, {
        status: headers['x-switchboard-events'] === 'all',
        reasoning: reasoningEvents(headers),
      });
      if (!request.stream) {
        res.status(200).json(response);
        return;
      }
      const writer = new SseWriter(res, this.config.streaming.heartbeatMs);
      await this.resumed.follow(
        principal.organizationId,
        user.userId,
        turn.responseId,
        -1,
        writer,
        signal,
        false,
      );
    } else if (request.stream) {
      const writer = new SseWriter(res, this.config.streaming.heartbeatMs);
      await this.responses.stream(turn, writer, departure, {
        status: wantsStatusEvents(headers),
        reasoning: reasoningEvents(headers),
      });
    } else {
      const json = await this.responses.respond(turn, departure);
      // Already JSON (the stored body's text): sent with the headers `res.json` would give it.
      res.status(200).set('Content-Type', 'application/json').send(json);
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

  /**
   * Reading, resuming, cancelling and deleting a stored response are `user` (or `full_access`)
   * routes: the `assistant` scope is for creating responses only. Each checks the organization
   * and the end user (`x-user-id`, or anonymous) in its query; another user's response is a 404.
   */

  /**
   * The stored response; with `?stream=true`, a background response's events after
   * `starting_after`, then the live turn to its end, from any replica.
   */
  @Get(':id')
  @RequireScopes('user')
  async find(
    @Principal() principal: ApiKeyPrincipal,
    @Param('id') id: string,
    @Query('stream') stream: unknown,
    @Query('starting_after') startingAfter: unknown,
    @Headers() headers: RequestHeaders,
    @Res() res: Response,
  ): Promise<void> {
    const { userId } = parseUserHeaders(headers);
    if (stream !== 'true') {
      res.status(200).json(await this.responses.find(principal, id, userId));
      return;
    }
    const after = parseStartingAfter(startingAfter);
    const responseId = await this.background.backgroundTurn(principal, id, userId, 'streamed again');
    const writer = new SseWriter(res, this.config.streaming.heartbeatMs);
    await this.resumed.follow(
      principal.organizationId,
      userId,
      responseId,
      after,
      writer,
      new ClientDeparture(res).signal,
      true,
    );
  }

  @Get(':id/input_items')
  @RequireScopes('user')
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
  @RequireScopes('user')
  delete(
    @Principal() principal: ApiKeyPrincipal,
    @Param('id') id: string,
    @Headers() headers: RequestHeaders,
  ): Promise<ResponseDeleted> {
    return this.responses.delete(principal, id, parseUserHeaders(headers).userId);
  }

  @Post(':id/cancel')
  @HttpCode(200)
  @RequireScopes('user')
  cancel(
    @Principal() principal: ApiKeyPrincipal,
    @Param('id') id: string,
    @Headers() headers: RequestHeaders,
  ): Promise<ResponseObject> {
    return this.background.cancel(principal, id, parseUserHeaders(headers).userId);
  }
}

/** `starting_after`: a sequence number (events after it are sent); absent, the whole stream. */
function parseStartingAfter(value: unknown): number {
  if (value === undefined) return -1;
  if (typeof value !== 'string' || !/^\d{1,9}$/.test(value)) {
    throw new ApiError('invalid_request', 'starting_after must be a sequence number (a whole number from 0)');
  }
  return Number(value);
}

/** OpenAI's SDKs know the reasoning events by their own names; others get the specification's. */
function reasoningEvents(headers: RequestHeaders): EventStyle['reasoning'] {
  return headers['x-stainless-lang'] === undefined ? 'response.reasoning' : 'response.reasoning_text';
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
