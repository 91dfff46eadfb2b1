import { Injectable, Logger } from '@nestjs/common';
import type { ApiKeyPrincipal } from '../api-keys/api-keys.service.js';
import { ApiError } from '../common/errors/error-catalogue.js';
import { parseResponseId, type CreateResponseDto, type UserHeaders } from './dto/create-response.dto.js';
import { TurnLeases } from './durable/turn-leases.service.js';
import { storedToObject, type ResponseObject } from './response-view.js';
import { TurnLedger } from './store/turn-ledger.repository.js';
import { TurnStore } from './store/turn-store.repository.js';
import { ResponseRecorder } from './streaming/response-recorder.js';
import { TurnStreams, type StreamTarget } from './streaming/turn-stream.js';
import { turnFailure } from './turn-failure.js';
import { TurnPreparer, type PreparedTurn } from './turn-preparer.js';
import { completionRecord, turnRecord, turnResponse, turnStart, usageOf } from './turn-record.js';
import { TurnProgress, TurnRunner } from './turn-runner.js';

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
    const recorder = new ResponseRecorder(undefined, false);
    const taken = new AbortController();
    // The lease is held once the row exists: a renewal before that would find no row and abort.
    const started = this.ledger.recordStart(this.start(turn)).then(
      () => {
        const lease = this.leases.hold(turn.responseId);
        lease.lost.addEventListener('abort', () => taken.abort(), { once: true });
        return lease;
      },
      () => null,
    );
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
   * Runs a turn as an event stream. The start of the turn is stored before `response.created`
   * hands out its id (one statement); the response is stored before `response.completed`, so a
   * client can continue from it immediately on any replica.
   */
  async stream(
    turn: PreparedTurn,
    target: StreamTarget,
    clientGone: AbortSignal,
    statusEvents: boolean,
  ): Promise<void> {
    await this.ledger.recordStart(this.start(turn));
    const lease = this.leases.hold(turn.responseId);
    const stream = this.streams.create(target, AbortSignal.any([clientGone, lease.lost]), statusEvents);
    const { recorder } = stream;
    stream.open();
    const plan = this.preparer.plan(turn, stream.signal);
    const progress = new TurnProgress(plan);
    try {
      recorder.emit('response.created', {
        response: turnResponse(turn, recorder, 'in_progress', null, null),
      });
      await this.runner.run(plan, recorder, progress);
      stream.complete(await this.persist(turn, recorder, progress, null, true));
    } catch (error) {
      await stream.fail(error, (failure) => this.persist(turn, recorder, progress, failure, true));
    } finally {
      lease.release();
      stream.end();
    }
  }

  async find(principal: ApiKeyPrincipal, id: string): Promise<ResponseObject> {
    const uuid = parseResponseId(id);
    const stored = uuid ? await this.store.findResponse(principal.organizationId, uuid) : null;
    if (!stored) throw new ApiError('response_not_found', `No response ${id}`);
    return storedToObject(stored);
  }

  /** The turn's final write: response, conversation and messages in one statement. */
  private async persist(
    turn: PreparedTurn,
    recorder: ResponseRecorder,
    progress: TurnProgress,
    failure: ApiError | null,
    startRecorded: boolean,
  ): Promise<ResponseObject> {
    const record = turnRecord(turn, recorder, progress, failure);
    await this.store.saveTurn(startRecorded ? completionRecord(record) : record);
    return turnResponse(turn, recorder, record.status, usageOf(progress), record.error);
  }

  private start(turn: PreparedTurn) {
    return turnStart(turn, 'in_progress', false, this.leases);
  }
}
