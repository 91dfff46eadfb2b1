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
import { TurnLeases } from './durable/turn-leases.service.js';
import { inputItemPage, type InputItemList } from './input-item-view.js';
import { storedToObject, type ResponseObject } from './response-view.js';
import { TurnLedger } from './store/turn-ledger.repository.js';
import { TurnStore } from './store/turn-store.repository.js';
import { ResponseRecorder, type EventStyle } from './streaming/response-recorder.js';
import { TurnStreams, type StreamTarget } from './streaming/turn-stream.js';
import { turnFailure } from './turn-failure.js';
import { TurnPreparer, type PreparedTurn } from './turn-preparer.js';
import { completionRecord, turnRecord, turnResponse, turnStart } from './turn-record.js';
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
 * the runner talks to the model, the turn store writes its start and its result (one statement
 * each), and the stream wrapper owns what streaming adds (events, client departure, shutdown).
 * A `store: false` turn writes nothing, so it has no start row and no lease.
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
    private readonly ledger: TurnLedger,
    private readonly leases: TurnLeases,
  ) {}

  /** Every read of the turn; errors here are plain HTTP errors even for `stream: true`. */
  prepare(principal: ApiKeyPrincipal, request: CreateResponseDto, user: UserHeaders): Promise<PreparedTurn> {
    return this.preparer.prepare(principal, request, user);
  }

  /**
   * Runs a turn for a JSON reply; upstream failures become 503s. The start of the turn is recorded
   * while the model works (the id is handed out only at the end), and awaited before the final
   * write; if it failed, the final write stores the whole turn as before.
   */
  async respond(turn: PreparedTurn, signal: AbortSignal): Promise<ResponseObject> {
    const recorder = new ResponseRecorder(undefined);
    const taken = new AbortController();
    // The lease is held once the row exists: a renewal before that would find no row and abort.
    const started: Promise<ReturnType<TurnLeases['hold']> | null> = turn.request.options.store
      ? this.ledger.recordStart(this.start(turn)).then(
          () => {
            const lease = this.leases.hold(turn.responseId);
            lease.lost.addEventListener('abort', () => taken.abort(), { once: true });
            return lease;
          },
          () => null,
        )
      : Promise.resolve(null);
    const plan = this.preparer.plan(turn, AbortSignal.any([signal, taken.signal]));
    const progress = new TurnProgress(plan);
    try {
      try {
        await this.runner.run(plan, recorder, progress);
      } catch (error) {
        const failure = turnFailure(error, this.logger);
        await this.persist(turn, recorder, progress, failure, (await started) !== null).catch(
          () => undefined,
        );
        throw failure;
      }
      return await this.persist(turn, recorder, progress, null, (await started) !== null);
    } finally {
      (await started)?.release();
    }
  }

  /**
   * Runs a turn as an event stream. The start of a stored turn is written (one statement) while
   * the model call is already on its way: `response.created` hands out the id only once that row
   * exists, and the model's first events wait for it, so the write adds nothing to the time to
   * first token. If it fails, the model call is aborted and the client gets a plain HTTP error, as
   * no byte was sent. The response is stored before `response.completed`, so a client can
   * continue from it immediately on any replica.
   */
  async stream(
    turn: PreparedTurn,
    target: StreamTarget,
    clientGone: AbortSignal,
    style: EventStyle,
  ): Promise<void> {
    const stored = turn.request.options.store;
    // Aborted when the lease is lost, or when the start could not be recorded.
    const ownership = new AbortController();
    const stream = this.streams.create(target, clientGone, style, ownership.signal);
    const { recorder } = stream;
    const plan = this.preparer.plan(turn, stream.signal);
    const progress = new TurnProgress(plan);
    const opened = (stored ? this.ledger.recordStart(this.start(turn)) : Promise.resolve()).then(() => {
      // The lease is held once the row exists: a renewal before that would find no row and abort.
      const lease = stored ? this.leases.hold(turn.responseId) : null;
      lease?.lost.addEventListener('abort', () => ownership.abort(), { once: true });
      stream.open();
      const started = turnResponse(turn, recorder, progress, 'in_progress', null, null);
      recorder.emit('response.created', { response: started });
      recorder.emit('response.in_progress', { response: started });
      return lease;
    });
    const startFailure = opened.then(
      () => null,
      (error: unknown) => {
        ownership.abort();
        return error;
      },
    );
    try {
      await this.runner.run({ ...plan, beforeFirstEvents: opened }, recorder, progress);
      await opened;
      stream.complete(await this.persist(turn, recorder, progress, null, stored));
    } catch (error) {
      const failedStart = await startFailure;
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- the ledger's error, for the filter to map
      if (failedStart !== null) throw failedStart;
      await stream.fail(error, (failure) => this.persist(turn, recorder, progress, failure, stored));
    } finally {
      (await opened.catch(() => null))?.release();
      stream.end();
    }
  }

  /** The stored response; the end user must match, as for threads (another user's is a 404). */
  async find(principal: ApiKeyPrincipal, id: string, userId: string | null): Promise<ResponseObject> {
    const uuid = parseResponseId(id);
    const stored = uuid ? await this.store.findResponse(principal.organizationId, userId, uuid) : null;
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
   * The turn's final write: response (with the Response object as sent), conversation and
   * messages in one statement, completing the row its start wrote. A `store: false` turn writes
   * nothing.
   */
  private async persist(
    turn: PreparedTurn,
    recorder: ResponseRecorder,
    progress: TurnProgress,
    failure: ApiError | null,
    startRecorded: boolean,
  ): Promise<ResponseObject> {
    const completedAt = new Date();
    const record = turnRecord(turn, recorder, progress, failure, completedAt);
    const response = turnResponse(turn, recorder, progress, record.status, record.error, completedAt);
    if (turn.request.options.store) {
      const full = { ...record, body: JSON.stringify(response) };
      await this.store.saveTurn(startRecorded ? completionRecord(full) : full);
      this.budgets.recorded({
        organizationId: record.organizationId,
        assistantId: record.assistantId,
        ...progress.usage,
      });
    }
    return response;
  }

  private start(turn: PreparedTurn) {
    return turnStart(turn, 'in_progress', this.leases);
  }
}
