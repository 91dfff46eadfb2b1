import { Injectable, Logger } from '@nestjs/common';
import type { ApiKeyPrincipal } from '../../api-keys/api-keys.service.js';
import { ApiError } from '../../common/errors/error-catalogue.js';
import { parseResponseId } from '../dto/create-response.dto.js';
import { RUNNING_STATUSES } from '../entities/response.entity.js';
import { storedToObject } from '../response-view.js';
import { LifecycleState, shutdownError } from '../../lifecycle/lifecycle.state.js';
import type { ResponseObject } from '../response-view.js';
import { TurnLedger } from '../store/turn-ledger.repository.js';
import { TurnStore } from '../store/turn-store.repository.js';
import { ResponseRecorder, type EventStyle } from '../streaming/response-recorder.js';
import { turnFailure } from '../turn-failure.js';
import { TurnPreparer, type PreparedTurn } from '../turn-preparer.js';
import { completionRecord, turnRecord, turnResponse, turnStart } from '../turn-record.js';
import { TurnProgress, TurnRunner } from '../turn-runner.js';
import { BackgroundTurns } from './background-turns.service.js';
import type { LiveTurn } from './live-turn.js';
import { TurnLeases } from './turn-leases.service.js';

/**
 * `background: true`: the turn is recorded as `queued` (one statement), answered at once, and run
 * on this replica whether or not a client is connected. Its events are kept for resumed streams;
 * `response.completed` (or `response.error`) is stored before the row's final status, so a
 * stream that sees the final status has already seen every event.
 */
@Injectable()
export class BackgroundResponses {
  private readonly logger = new Logger('Responses');

  constructor(
    private readonly preparer: TurnPreparer,
    private readonly runner: TurnRunner,
    private readonly store: TurnStore,
    private readonly ledger: TurnLedger,
    private readonly leases: TurnLeases,
    private readonly turns: BackgroundTurns,
    private readonly lifecycle: LifecycleState,
  ) {}

  async create(turn: PreparedTurn, style: EventStyle): Promise<{ response: ResponseObject; live: LiveTurn }> {
    this.turns.checkRoom(turn.principal.organizationId);
    await this.ledger.recordStart(turnStart(turn, 'queued', this.leases));
    const live = this.turns.start(turn.principal.organizationId, turn.responseId, (events, signal, lost) =>
      this.run(turn, events, signal, lost, style),
    );
    const response = turnResponse(turn, new ResponseRecorder(undefined), null, 'queued', null, null);
    return { response, live };
  }

  /**
   * Cancels a background turn from any replica: the row says `cancelled` at once; the replica
   * running it aborts the model call and tools (at once here, within TURN_LEASE_RENEW_MS
   * elsewhere). A finished response is answered as it is; cancelling twice is harmless.
   */
  async cancel(principal: ApiKeyPrincipal, id: string, userId: string | null): Promise<ResponseObject> {
    const responseId = await this.backgroundTurn(principal, id, userId, 'cancelled');
    const stored = await this.store.findResponse(principal.organizationId, userId, responseId);
    if (stored && RUNNING_STATUSES.includes(stored.status)) {
      await this.turns.stop(responseId);
      await this.ledger.cancel(principal.organizationId, responseId);
    }
    const final = await this.store.findResponse(principal.organizationId, userId, responseId);
    if (!final) throw new ApiError('response_not_found', `No response ${id}`);
    return storedToObject(final);
  }

  /**
   * The id of a background response of this organization and user (an anonymous one only
   * anonymously); 404 otherwise, 400 for a response that was not created in the background.
   */
  async backgroundTurn(
    principal: ApiKeyPrincipal,
    id: string,
    userId: string | null,
    action: 'cancelled' | 'streamed again',
  ): Promise<string> {
    const uuid = parseResponseId(id);
    const state = uuid ? await this.ledger.findTurn(principal.organizationId, uuid, userId) : null;
    if (!uuid || !state) throw new ApiError('response_not_found', `No response ${id}`);
    if (!state.background) {
      throw new ApiError(
        'invalid_request',
        `Only background responses can be ${action}; ${id} was not created with background: true`,
      );
    }
    return uuid;
  }

  private async run(
    turn: PreparedTurn,
    live: LiveTurn,
    signal: AbortSignal,
    lost: AbortSignal,
    style: EventStyle,
  ): Promise<void> {
    const recorder = new ResponseRecorder(live, style);
    const plan = this.preparer.plan(turn, signal);
    const progress = new TurnProgress(plan);
    try {
      const started = turnResponse(turn, recorder, progress, 'in_progress', null, null);
      recorder.emit('response.created', { response: started });
      recorder.emit('response.in_progress', { response: started });
      await this.runner.run(plan, recorder, progress);
      const completedAt = new Date();
      const record = turnRecord(turn, recorder, progress, null, completedAt);
      // The stored body is the very object the final event carries.
      const response = turnResponse(turn, recorder, progress, record.status, null, completedAt);
      const type = response.status === 'incomplete' ? 'response.incomplete' : 'response.completed';
      recorder.emit(type, { response });
      await live.flush();
      await this.store.saveTurn(completionRecord({ ...record, body: JSON.stringify(response) }));
    } catch (error) {
      if (lost.aborted) {
        // Cancelled, or taken from this replica: the row already tells; keep what was emitted.
        await live.flush();
        live.stopStoring();
        return;
      }
      const failure = this.lifecycle.drainDeadline.aborted
        ? shutdownError()
        : turnFailure(error, this.logger);
      recorder.interrupt();
      const completedAt = new Date();
      const record = turnRecord(turn, recorder, progress, failure, completedAt);
      const response = turnResponse(turn, recorder, progress, 'failed', record.error, completedAt);
      recorder.emit('response.failed', { response });
      recorder.emit('response.error', { error: failure.toBody().error });
      await live.flush();
      await this.store.saveTurn(completionRecord({ ...record, body: JSON.stringify(response) }));
    }
  }
}
