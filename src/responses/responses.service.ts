import { Injectable, Logger } from '@nestjs/common';
import type { ApiKeyPrincipal } from '../api-keys/api-keys.service.js';
import { ApiError } from '../common/errors/error-catalogue.js';
import {
  parseResponseId,
  type CreateResponseDto,
  type InputItem,
  type UserHeaders,
} from './dto/create-response.dto.js';
import type { ListInputItemsQuery } from './dto/list-input-items.dto.js';
import { inputItemPage, type InputItemList } from './input-item-view.js';
import { responseObject, storedToObject, type ResponseObject } from './response-view.js';
import { TurnStore } from './store/turn-store.repository.js';
import { ResponseRecorder, type EventStyle } from './streaming/response-recorder.js';
import { TurnStreams, type StreamTarget } from './streaming/turn-stream.js';
import { turnFailure } from './turn-failure.js';
import { TurnPreparer, type PreparedTurn } from './turn-preparer.js';
import { turnRecord, usageOf } from './turn-record.js';
import { TurnProgress, TurnRunner } from './turn-runner.js';
import { UsageBudgetService } from '../usage/usage-budget.service.js';

/** OpenAI's deletion object. */
export interface ResponseDeleted {
  id: string;
  object: 'response';
  deleted: true;
}

/**
 * A turn from request to stored response: the preparer reads everything before the first byte,
 * the runner talks to the model, the turn store writes the result in one statement, and the
 * stream wrapper owns what streaming adds (events, client departure, shutdown).
 */
@Injectable()
export class ResponsesService {
  private readonly logger = new Logger('Responses');

  constructor(
    private readonly preparer: TurnPreparer,
    private readonly runner: TurnRunner,
    private readonly store: TurnStore,
    private readonly streams: TurnStreams,
    private readonly budgets: UsageBudgetService,
  ) {}

  /** Every read of the turn; errors here are plain HTTP errors even for `stream: true`. */
  prepare(principal: ApiKeyPrincipal, request: CreateResponseDto, user: UserHeaders): Promise<PreparedTurn> {
    return this.preparer.prepare(principal, request, user);
  }

  /** Runs a turn for a JSON reply; upstream failures become 503s. */
  async respond(turn: PreparedTurn, signal: AbortSignal): Promise<ResponseObject> {
    const recorder = new ResponseRecorder(undefined);
    const plan = this.preparer.plan(turn, signal);
    const progress = new TurnProgress(plan);
    try {
      await this.runner.run(plan, recorder, progress);
    } catch (error) {
      const failure = turnFailure(error, this.logger);
      await this.persist(turn, recorder, progress, failure).catch(() => undefined);
      throw failure;
    }
    return this.persist(turn, recorder, progress, null);
  }

  /**
   * Runs a turn as an event stream. `response.created` goes out at once; the response is stored
   * before `response.completed`, so a client can continue from it immediately on any replica.
   */
  async stream(
    turn: PreparedTurn,
    target: StreamTarget,
    clientGone: AbortSignal,
    style: EventStyle,
  ): Promise<void> {
    const stream = this.streams.create(target, clientGone, style);
    const { recorder } = stream;
    stream.open();
    const plan = this.preparer.plan(turn, stream.signal);
    const progress = new TurnProgress(plan);
    try {
      const started = this.view(turn, recorder, progress, 'in_progress', null, null);
      recorder.emit('response.created', { response: started });
      recorder.emit('response.in_progress', { response: started });
      await this.runner.run(plan, recorder, progress);
      stream.complete(await this.persist(turn, recorder, progress, null));
    } catch (error) {
      await stream.fail(error, (failure) => this.persist(turn, recorder, progress, failure));
    } finally {
      stream.end();
    }
  }

  async find(principal: ApiKeyPrincipal, id: string): Promise<ResponseObject> {
    const uuid = parseResponseId(id);
    const stored = uuid ? await this.store.findResponse(principal.organizationId, uuid) : null;
    if (!stored) throw new ApiError('response_not_found', `No response ${id}`);
    return storedToObject(stored);
  }

  /** A page of the items the response was created with; the end user must match, as for threads. */
  async inputItems(
    principal: ApiKeyPrincipal,
    id: string,
    userId: string | null,
    query: ListInputItemsQuery,
  ): Promise<InputItemList> {
    const uuid = parseResponseId(id);
    const input = uuid ? await this.store.findInput(principal.organizationId, userId, uuid) : null;
    if (!uuid || !input) throw new ApiError('response_not_found', `No response ${id}`);
    return inputItemPage(input as InputItem[], uuid, query);
  }

  /** Deletes a response for good; turns that continued from it can no longer be continued. */
  async delete(principal: ApiKeyPrincipal, id: string, userId: string | null): Promise<ResponseDeleted> {
    const uuid = parseResponseId(id);
    const deleted = uuid ? await this.store.deleteResponse(principal.organizationId, userId, uuid) : false;
    if (!deleted) throw new ApiError('response_not_found', `No response ${id}`);
    return { id: `resp_${uuid}`, object: 'response', deleted: true };
  }

  /**
   * The turn's only write: response (with the Response object as sent), conversation and
   * messages in one statement. A `store: false` turn writes nothing.
   */
  private async persist(
    turn: PreparedTurn,
    recorder: ResponseRecorder,
    progress: TurnProgress,
    failure: ApiError | null,
  ): Promise<ResponseObject> {
    const completedAt = new Date();
    const record = turnRecord(turn, recorder, progress, failure, completedAt);
    const response = this.view(turn, recorder, progress, record.status, record.error, completedAt);
    if (turn.request.options.store) {
      await this.store.saveTurn({ ...record, body: JSON.stringify(response) });
      this.budgets.recorded({
        organizationId: record.organizationId,
        assistantId: record.assistantId,
        ...progress.usage,
      });
    }
    return response;
  }

  private view(
    turn: PreparedTurn,
    recorder: ResponseRecorder,
    progress: TurnProgress,
    status: ResponseObject['status'],
    error: ResponseObject['error'],
    completedAt: Date | null,
  ): ResponseObject {
    const kept = turn.request.options.store || turn.previous !== null;
    return responseObject({
      id: turn.responseId,
      assistantId: turn.assistant.id,
      conversationId: kept ? turn.conversationId : null,
      previousResponseId: turn.previous?.responseId ?? null,
      createdAt: turn.createdAt,
      completedAt,
      status,
      incompleteReason: status === 'incomplete' ? progress.incompleteReason : null,
      instructions: turn.request.instructions,
      output: recorder.output,
      outputText: recorder.outputText,
      usage: status === 'in_progress' ? null : usageOf(progress),
      error,
      params: turn.params,
    });
  }
}
