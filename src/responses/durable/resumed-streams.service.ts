import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable } from '@nestjs/common';
import { ApiError } from '../../common/errors/error-catalogue.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { InFlightLimiter, type Release } from '../../limits/in-flight-limiter.service.js';
import { Metrics } from '../../metrics/metrics.service.js';
import { RUNNING_STATUSES } from '../entities/response.entity.js';
import { storedToObject } from '../response-view.js';
import { TurnLedger, type StoredEvent } from '../store/turn-ledger.repository.js';
import { TurnStore } from '../store/turn-store.repository.js';
import type { SseWriter } from '../streaming/sse-writer.js';
import { BackgroundTurns } from './background-turns.service.js';
import { TERMINAL_EVENTS } from './live-turn.js';
import { storedError } from '../turn-ended.js';

const PAGE = 500;

/** Where a follower is in a background turn's stream. */
interface Cursor {
  last: number;
  terminal: string | null;
}

/**
 * Streams a background turn's events after a sequence number, then follows it to its end: from
 * memory on the replica running it, otherwise from the database (one indexed read per
 * RESUME_POLL_MS while events keep coming; while nothing is new the interval doubles up to
 * RESUME_POLL_MAX_MS). Stored events are sent as they were first sent. A turn that ended without
 * a final event (cancelled, or its replica lost) ends with a `response.error` built from its row,
 * numbered after the last stored event. A resumed stream holds a slot of the in-flight cap and of
 * its organization's share of it, like any response in progress (503 or 429 before it starts).
 */
@Injectable()
export class ResumedStreams {
  private readonly pollMs: number;
  private readonly pollMaxMs: number;

  constructor(
    private readonly ledger: TurnLedger,
    private readonly store: TurnStore,
    private readonly turns: BackgroundTurns,
    private readonly metrics: Metrics,
    private readonly inFlight: InFlightLimiter,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.pollMs = config.durableTurns.followPollMs;
    this.pollMaxMs = config.durableTurns.followPollMaxMs;
  }

  /** `userId`: the end user the turn belongs to, checked again when its row is read. */
  async follow(
    organizationId: string,
    userId: string | null,
    responseId: string,
    after: number,
    writer: SseWriter,
    clientGone: AbortSignal,
    resumed: boolean,
  ): Promise<void> {
    const cursor: Cursor = { last: after, terminal: null };
    const send = (event: StoredEvent) => {
      writer.frame(`event: ${event.type}\ndata: ${event.data}\n\n`);
      cursor.last = event.sequenceNumber;
      if (TERMINAL_EVENTS.has(event.type)) cursor.terminal = event.type;
    };
    // A stream opened by the POST that created the turn already holds the request's slot.
    const slot: Release | null = resumed ? this.inFlight.acquireFor(organizationId) : null;
    let idleMs = this.pollMs;
    writer.open();
    this.metrics.streamOpened();
    if (resumed) this.metrics.streamResumed();
    try {
      while (!cursor.terminal && !clientGone.aborted) {
        const live = this.turns.find(responseId);
        if (live) {
          for (const event of live.frames) if (event.sequenceNumber > cursor.last) send(event);
          if (!cursor.terminal && !live.ended) await live.changed(clientGone);
          if (!live.ended || cursor.terminal) continue;
        }
        const events = await this.ledger.readEvents(organizationId, userId, responseId, cursor.last, PAGE);
        events.forEach(send);
        if (cursor.terminal || events.length === PAGE || this.turns.find(responseId)) continue;
        if (events.length === 0 && (await this.ended(organizationId, userId, responseId, cursor, send)))
          break;
        if (events.length > 0) idleMs = this.pollMs;
        else {
          await sleep(idleMs, undefined, { signal: clientGone, ref: false }).catch(() => undefined);
          idleMs = Math.min(idleMs * 2, this.pollMaxMs);
        }
      }
    } finally {
      this.metrics.streamClosed();
      slot?.();
    }
    if (cursor.terminal === 'response.completed' || cursor.terminal === 'response.incomplete') writer.done();
    else writer.close();
  }

  /** True when the turn has ended: the last stored events, then a final event if none was stored. */
  private async ended(
    organizationId: string,
    userId: string | null,
    responseId: string,
    cursor: Cursor,
    send: (event: StoredEvent) => void,
  ): Promise<boolean> {
    const stored = await this.store.findResponse(organizationId, userId, responseId);
    if (!stored) throw new ApiError('response_not_found', `No response resp_${responseId}`);
    if (RUNNING_STATUSES.includes(stored.status)) return false;
    // The final status is written after the final events: read once more to catch the last batch.
    (await this.ledger.readEvents(organizationId, userId, responseId, cursor.last, PAGE)).forEach(send);
    if (cursor.terminal) return true;
    const sequence_number = cursor.last + 1;
    if (
      stored.status === 'completed' ||
      stored.status === 'requires_action' ||
      stored.status === 'incomplete'
    ) {
      const type = stored.status === 'incomplete' ? 'response.incomplete' : 'response.completed';
      const payload = { type, sequence_number, response: storedToObject(stored) };
      send({ sequenceNumber: sequence_number, type: payload.type, data: JSON.stringify(payload) });
      return true;
    }
    const error = storedError(stored).toBody().error;
    const payload = { type: 'response.error', sequence_number, error };
    send({ sequenceNumber: sequence_number, type: payload.type, data: JSON.stringify(payload) });
    return true;
  }
}
