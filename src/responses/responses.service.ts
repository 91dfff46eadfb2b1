import { Injectable, Logger } from '@nestjs/common';
import type { ApiKeyPrincipal } from '../api-keys/api-keys.service.js';
import { ApiError } from '../common/errors/error-catalogue.js';
import { parseResponseId, type CreateResponseDto, type UserHeaders } from './dto/create-response.dto.js';
import { responseObject, storedToObject, type ResponseObject } from './response-view.js';
import { TurnStore } from './store/turn-store.repository.js';
import { ResponseRecorder } from './streaming/response-recorder.js';
import { TurnStreams, type StreamTarget } from './streaming/turn-stream.js';
import { turnFailure } from './turn-failure.js';
import { TurnPreparer, type PreparedTurn } from './turn-preparer.js';
import { turnRecord, usageOf } from './turn-record.js';
import { TurnProgress, TurnRunner } from './turn-runner.js';
import { UsageBudgetService } from '../usage/usage-budget.service.js';

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
    const recorder = new ResponseRecorder(undefined, false);
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
    statusEvents: boolean,
  ): Promise<void> {
    const stream = this.streams.create(target, clientGone, statusEvents);
    const { recorder } = stream;
    stream.open();
    const plan = this.preparer.plan(turn, stream.signal);
    const progress = new TurnProgress(plan);
    try {
      recorder.emit('response.created', {
        response: this.view(turn, recorder, 'in_progress', null, null),
      });
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

  /** The turn's only write: response, conversation and messages in one statement. */
  private async persist(
    turn: PreparedTurn,
    recorder: ResponseRecorder,
    progress: TurnProgress,
    failure: ApiError | null,
  ): Promise<ResponseObject> {
    const record = turnRecord(turn, recorder, progress, failure);
    await this.store.saveTurn(record);
    this.budgets.recorded({
      organizationId: record.organizationId,
      assistantId: record.assistantId,
      ...progress.usage,
    });
    return this.view(turn, recorder, record.status, usageOf(progress), record.error);
  }

  private view(
    turn: PreparedTurn,
    recorder: ResponseRecorder,
    status: ResponseObject['status'],
    usage: ResponseObject['usage'],
    error: ResponseObject['error'],
  ): ResponseObject {
    return responseObject({
      id: turn.responseId,
      assistantId: turn.assistant.id,
      conversationId: turn.conversationId,
      previousResponseId: turn.previous?.responseId ?? null,
      createdAt: turn.createdAt,
      status,
      instructions: turn.request.instructions,
      output: recorder.output,
      outputText: recorder.outputText,
      usage,
      error,
    });
  }
}
