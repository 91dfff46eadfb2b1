import { Injectable, Logger } from '@nestjs/common';
import { logUnexpected } from '../common/errors/all-exceptions.filter.js';
import { ApiError } from '../common/errors/error-catalogue.js';
import { TurnEvents } from '../turns/turn-events.js';
import { TurnProgress } from '../turns/turn-plan.js';
import type { TurnRecord } from '../turns/turn.types.js';
import { TurnLeases } from './durable/turn-leases.service.js';
import { StartRecords } from './store/start-records.js';
import { TurnLedger, type StoredEvent } from './store/turn-ledger.repository.js';
import { TurnStore } from './store/turn-store.repository.js';
import type { PreparedTurn } from './turn-preparer.js';
import { TurnPlanner } from './turn-planner.js';
import { endedElsewhere, type EndedElsewhere } from './turn-ended.js';
import { completionRecord, TurnRecording } from './turn-record.js';
import { isRefusal } from './turn-failure.js';
import { TurnRunner } from './turn-runner.js';
import type { TurnEnd, TurnSink } from './turn-sink.js';

/**
 * The one executor of a turn: the planner's plan, the runner's model loop, the start row and the
 * lease, the final write and the "turn recorded" event; foreground JSON, foreground stream and
 * background differ only in their sink. A `store: false` turn writes nothing, so it has no start
 * row and no lease.
 */
@Injectable()
export class TurnExecutor {
  private readonly logger = new Logger('TurnExecutor');

  constructor(
    private readonly planner: TurnPlanner,
    private readonly runner: TurnRunner,
    private readonly store: TurnStore,
    private readonly ledger: TurnLedger,
    private readonly starts: StartRecords,
    private readonly leases: TurnLeases,
    private readonly events: TurnEvents,
  ) {}

  /** The start row of a stored turn (`queued` for a background turn), owned by this replica. */
  recordStart(recording: TurnRecording, status: 'queued' | 'in_progress'): Promise<void> {
    return this.starts.record(recording.start(status, this.leases));
  }

  /**
   * Runs the turn to its end; `sinkFor` gets the signal that aborts when the lease is lost. A
   * foreground turn's start row (one statement) is written here while the model call is on its way,
   * and its lease held once the row exists. A background turn comes with the recording its start
   * row was written from (`queued`, before it was answered), and its queue holds the lease.
   */
  async runTurn(
    turn: PreparedTurn,
    sinkFor: (lost: AbortSignal) => TurnSink,
    recorded?: TurnRecording,
  ): Promise<void> {
    // Aborted when the lease is lost, or when a start the sink waits for could not be recorded.
    const ownership = new AbortController();
    const sink = sinkFor(ownership.signal);
    const plan = this.planner.plan(turn, sink.signal);
    const progress = new TurnProgress(plan);
    const recording = recorded ?? new TurnRecording(turn);
    const announce = <T>(lease: T): T => {
      const running = recording.running(sink.recorder, progress, 'in_progress');
      sink.started(running.response, running.json);
      return lease;
    };
    // A recorded (background) turn announces itself before its first model call.
    const opened = recorded
      ? Promise.resolve(announce(null))
      : this.open(recording, sink, ownership).then(announce);
    const held = opened.catch(() => null);
    const startFailure = opened.then(
      () => null,
      (error: unknown) => {
        if (sink.waitsForStart) ownership.abort();
        return error;
      },
    );
    const recordedStart = async () => recording.stored && sink.recordsStart && (await startFailure) === null;
    try {
      const waited = sink.waitsForStart ? { ...plan, beforeFirstEvents: opened } : plan;
      await this.runner.run(waited, sink.recorder, progress);
      if (sink.waitsForStart) await opened;
      await sink.complete(this.conclude(recording, sink, progress, null, await recordedStart()));
    } catch (error) {
      const failedStart = sink.waitsForStart ? await startFailure : null;
      if (failedStart !== null) {
        if (isRefusal(failedStart)) await this.refusedStartUsage(recording, sink, progress, failedStart);
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- the ledger's error, for the filter to map
        throw failedStart;
      }
      const started = await recordedStart();
      await sink.fail(error, (failure) => this.conclude(recording, sink, progress, failure, started));
    } finally {
      (await held)?.release();
      sink.close();
    }
  }

  /**
   * Writes the start row of a foreground turn and then holds its lease (a renewal before the row
   * exists would find none and abort); a background turn's row and lease exist already.
   */
  private async open(
    recording: TurnRecording,
    sink: TurnSink,
    ownership: AbortController,
  ): Promise<{ release(): void } | null> {
    if (!recording.stored || !sink.recordsStart) return null;
    await this.recordStart(recording, 'in_progress');
    const lease = this.leases.hold(recording.responseId);
    lease.lost.addEventListener('abort', () => ownership.abort(), { once: true });
    return lease;
  }

  /**
   * The turn's end: its Response object (the stored body is the very object the client gets)
   * and its final write — response, conversation, messages and pending usage in one statement,
   * completing the row its start wrote, or inserting it all when there is none — followed by the
   * "turn recorded" event.
   */
  private conclude(
    recording: TurnRecording,
    { recorder, recordsStart }: TurnSink,
    progress: TurnProgress,
    failure: ApiError | null,
    startRecorded: boolean,
  ): TurnEnd {
    const completedAt = new Date();
    const record = recording.record(recorder, progress, failure, completedAt);
    const response = recording.response(recorder, progress, record.status, record.error, completedAt);
    let json: string | undefined;
    const responseJson = () => (json ??= JSON.stringify(response));
    const save = async (events?: StoredEvent[][]) => {
      if (!recording.stored) return null;
      const full = { ...record, body: responseJson() };
      // A recorded start's row is completed; without a start row, a JSON turn inserts it all; a
      // start whose outcome is unknown would be made good by the upsert (no sink has one today).
      let stored: boolean;
      if (startRecorded) stored = await this.store.completeTurn(completionRecord(full), events);
      else if (recordsStart) stored = await this.store.saveTurn(full, events);
      else stored = await this.store.insertTurn(full);
      if (stored) {
        announce();
        return null;
      }
      // Cancelled or swept between its last event and this write: the row is not ours any more and
      // the write stored nothing, usage included; the upstream billed it all the same.
      await recordEndedUsage();
      return this.storedEnd(recording, record);
    };
    const saveUsage = async () => {
      if (startRecorded) await recordEndedUsage();
    };
    // Once per response id whoever calls it (the row's `usage` is the guard), and announced only
    // by the call that stored it, so the budget and the metrics count what the rollups will.
    const recordEndedUsage = async () => {
      if (await this.ledger.recordEndedUsage({ ...record, body: null })) announce();
    };
    const announce = () => this.events.recorded(recording.recorded(record, progress));
    return { response, responseJson, save, saveUsage, storedEnd: () => this.storedEnd(recording, record) };
  }

  /**
   * A refused start (404) stores no turn, but its model call went out: the usage the upstream
   * reported before the call was stopped counts, under no user (docs/usage.md).
   */
  private async refusedStartUsage(
    recording: TurnRecording,
    sink: TurnSink,
    progress: TurnProgress,
    refusal: ApiError,
  ) {
    if (!recording.stored || progress.spend.size === 0) return;
    try {
      const record = recording.record(sink.recorder, progress, refusal, new Date());
      if (await this.ledger.recordRefusedUsage({ ...record, body: null }))
        this.events.recorded(recording.recorded(record, progress));
    } catch (error) {
      logUnexpected(this.logger, error, 'could not record the usage of a refused start'); // the 404 stands
    }
  }

  /**
   * What the store holds of a turn whose final write stored nothing: one read, on this path only
   * (a stored turn's end costs no statement more). Unreadable, the client hears a server error
   * (logged), never an end the store may not hold.
   */
  private async storedEnd(
    recording: TurnRecording,
    record: Pick<TurnRecord, 'organizationId' | 'userId'>,
  ): Promise<EndedElsewhere> {
    try {
      return endedElsewhere(
        await this.store.findResponse(record.organizationId, record.userId, recording.responseId),
      );
    } catch (error) {
      logUnexpected(this.logger, error, 'could not read the stored end of a turn');
      return { response: null, error: new ApiError('server_error', 'The response could not be read') };
    }
  }
}
