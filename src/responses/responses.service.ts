import { Injectable, Logger } from '@nestjs/common';
import type { ApiKeyPrincipal } from '../api-keys/api-keys.service.js';
import { ApiError } from '../common/errors/error-catalogue.js';
import { AbortOnAny } from '../common/runtime/abort-on-any.js';
import { parseResponseId, type CreateResponseDto, type UserHeaders } from './dto/create-response.dto.js';
import type { ListInputItemsQuery } from './dto/list-input-items.dto.js';
import { inputItemPage, type InputItemList } from './input-item-view.js';
import { storedToObject, type ResponseObject } from './response-view.js';
import { TurnStore } from './store/turn-store.repository.js';
import { ResponseRecorder, type EventStyle } from './streaming/response-recorder.js';
import type { ClientDeparture } from './streaming/client-departure.js';
import { TurnStreams, type StreamTarget } from './streaming/turn-stream.js';
import { turnFailure } from './turn-failure.js';
import { TurnExecutor } from './turn-executor.js';
import type { TurnEnd, TurnSink } from './turn-sink.js';
import { TurnPreparer, type PreparedTurn } from './turn-preparer.js';
import type { InputItem } from '../turns/input-item.types.js';

/** OpenAI's deletion object. */
export interface ResponseDeleted {
  id: string;
  object: 'response';
  deleted: true;
}

/**
 * A foreground turn from request to stored response: the preparer reads everything before the
 * first byte, the executor runs the turn (start row, model loop, final write) into a sink — a JSON
 * reply here, or a TurnStream that owns what streaming adds (events, client departure, shutdown).
 * Reading and deleting stored responses go to the turn store.
 */
@Injectable()
export class ResponsesService {
  private readonly logger = new Logger('Responses');

  constructor(
    private readonly preparer: TurnPreparer,
    private readonly executor: TurnExecutor,
    private readonly store: TurnStore,
    private readonly streams: TurnStreams,
  ) {}

  /** Every read of the turn; errors here are plain HTTP errors even for `stream: true`. */
  prepare(principal: ApiKeyPrincipal, request: CreateResponseDto, user: UserHeaders): Promise<PreparedTurn> {
    return this.preparer.prepare(principal, request, user);
  }

  /** Runs a turn for a JSON reply (the Response's JSON text); upstream failures become 503s. */
  async respond(turn: PreparedTurn, departure: ClientDeparture): Promise<string> {
    let reply: JsonReply | undefined;
    await this.executor.runTurn(turn, (lost) => {
      // A JSON turn holds no lease today, so `lost` stays quiet; joined all the same, so that one would stop it.
      reply = new JsonReply(new AbortOnAny([lost], departure), this.logger);
      return reply;
    });
    return reply!.answer();
  }

  /** Runs a turn as an event stream (see TurnStream for what streaming adds). */
  stream(
    turn: PreparedTurn,
    target: StreamTarget,
    departure: ClientDeparture,
    style: EventStyle,
  ): Promise<void> {
    return this.executor.runTurn(turn, (lost) => this.streams.create(target, departure, style, lost));
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
}

/**
 * The JSON reply's sink: no events; the response is stored before it is returned, and a failed
 * turn is stored as failed before its error is thrown for the exception filter. A final write
 * that stored nothing is answered with the error of what the store holds, not the response.
 */
class JsonReply implements TurnSink {
  readonly recorder = new ResponseRecorder(undefined);
  readonly waitsForStart = false;
  readonly recordsStart = false;
  /** The client left (or, were a JSON turn leased, the turn is no longer this replica's). */
  readonly signal: AbortSignal;
  /** The stored response's JSON text: the stored body's, not serialized a second time. */
  private json: string | undefined;
  private notStored: ApiError | undefined;

  constructor(
    private readonly stops: AbortOnAny,
    private readonly logger: Logger,
  ) {
    this.signal = stops.signal;
  }

  started(): void {}

  async complete(end: TurnEnd): Promise<void> {
    // Not thrown here: the executor would take it for the run's failure and write the turn again.
    const ended = await end.save();
    if (ended) this.notStored = ended.error;
    else this.json = end.responseJson();
  }

  /** The stored response as JSON, once the executor is done; or the error standing for it. */
  answer(): string {
    if (this.notStored) throw this.notStored;
    return this.json!;
  }

  async fail(error: unknown, conclude: (failure: ApiError) => TurnEnd): Promise<never> {
    const failure = turnFailure(error, this.logger);
    await conclude(failure)
      .save()
      .catch(() => undefined);
    throw failure;
  }

  close(): void {
    this.stops.release();
  }
}
