import { Injectable, Logger } from '@nestjs/common';
import type { ApiKeyPrincipal } from '../../api-keys/api-keys.service.js';
import { ApiError } from '../../common/errors/error-catalogue.js';
import { LifecycleState } from '../../lifecycle/lifecycle.state.js';
import { parseResponseId } from '../dto/create-response.dto.js';
import { RUNNING_STATUSES } from '../entities/response.entity.js';
import { storedToObject, type ResponseObject } from '../response-view.js';
import { TurnLedger } from '../store/turn-ledger.repository.js';
import { TurnStore } from '../store/turn-store.repository.js';
import type { EventStyle } from '../streaming/response-recorder.js';
import { TurnExecutor } from '../turn-executor.js';
import type { PreparedTurn } from '../turn-preparer.js';
import { TurnRecording } from '../turn-record.js';
import { BackgroundSink } from './background-sink.js';
import { BackgroundTurns } from './background-turns.service.js';
import type { LiveTurn } from './live-turn.js';

/**
 * `background: true`: the turn is recorded (one statement: `in_progress` when it starts at once,
 * `queued` when it must wait for a slot), answered at once (`queued`, as OpenAI answers), and run
 * by the executor on this replica whether or not a client is connected, into a BackgroundSink
 * that keeps its events for resumed streams.
 */
@Injectable()
export class BackgroundResponses {
  private readonly logger = new Logger('Responses');

  constructor(
    private readonly executor: TurnExecutor,
    private readonly store: TurnStore,
    private readonly ledger: TurnLedger,
    private readonly turns: BackgroundTurns,
    private readonly lifecycle: LifecycleState,
  ) {}

  async create(turn: PreparedTurn, style: EventStyle): Promise<{ response: ResponseObject; live: LiveTurn }> {
    const organizationId = turn.principal.organizationId;
    // A turn that starts at once is recorded running (owned and leased here): no claim UPDATE.
    const recording = new TurnRecording(turn);
    const startsNow = this.turns.reserve(organizationId);
    try {
      await this.executor.recordStart(recording, startsNow ? 'in_progress' : 'queued');
    } catch (error) {
      if (startsNow) this.turns.unreserve(organizationId);
      throw error;
    }
    const live = this.turns.start(
      organizationId,
      turn.responseId,
      (events, signal, lost) =>
        this.executor.runTurn(
          turn,
          () => new BackgroundSink(events, signal, lost, style, this.lifecycle, this.logger),
          recording,
        ),
      startsNow,
    );
    return { response: recording.announced('queued'), live };
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
}
