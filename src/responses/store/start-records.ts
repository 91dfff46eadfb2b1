import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Pool, PoolClient } from 'pg';
import { DataSource } from 'typeorm';
import { preparedQueryOn } from '../../database/prepared-query.js';
import { responseRowWritten } from './turn-sql.js';
import { startsStatement } from './start-records-sql.js';
import { ApiError } from '../../common/errors/error-catalogue.js';
import type { TurnStart } from '../../turns/turn.types.js';

/** The most starts, and bytes of rows, one statement carries (a burst beyond is written by the next ones). */
const MAX_BATCH = 64;
const MAX_BATCH_BYTES = 1024 * 1024;
/** Statements in flight at once, each on a connection of its own kept for start records. */
const WRITERS = 2;
/** Below this pool size no connection is set aside: the others would be too few. */
const MIN_POOL_FOR_OWN_CONNECTIONS = 8;

interface Pending {
  start: TurnStart;
  /** The start as an element of the statement's JSON array. */
  row: string;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** A connection taken from the pool, and how to give it back (destroyed when it failed). */
interface Connection {
  client: PoolClient;
  /** Set aside for start records: given back only when it fails or the replica stops. */
  kept: boolean;
  dead: boolean;
  release(failed: boolean): void;
}

/**
 * The start records of this replica's streamed turns (docs/architecture.md, Durable turns). A
 * stream's first events wait for its start record, so it must not queue behind other turns'
 * final writes, renewals and reads in the pool, nor behind other starts. So two connections of
 * the pool are kept for start records alone, and their writes are committed in groups: a start
 * goes out at once on a connection that is free, and the starts that arrive while both are busy
 * go together in the next statement (one round trip and one commit for all of them). A statement
 * the database refuses is retried start by start, so one start's error (say, its assistant
 * deleted meanwhile) fails that turn alone. With a small pool (the embedded database's four),
 * each statement takes a connection from the pool and gives it back.
 */
@Injectable()
export class StartRecords implements OnModuleDestroy {
  private pending: Pending[] = [];
  private writers = 0;
  /** Kept connections not in use now, and how many are kept in all. */
  private readonly free: Connection[] = [];
  private kept = 0;
  private closed = false;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Resolves once the turn's start record is committed. */
  record(start: TurnStart): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ start, row: startRow(start), resolve, reject });
      if (this.writers < WRITERS) void this.drain();
    });
  }

  onModuleDestroy(): void {
    this.closed = true;
    for (const connection of this.free.splice(0)) connection.release(false);
  }

  private async drain(): Promise<void> {
    this.writers++;
    try {
      while (this.pending.length > 0) {
        // The connection first: what arrives while it is awaited goes in this statement too.
        const connection = await this.connection();
        const batch = this.take();
        if (batch.length > 0) await this.write(batch, connection);
        else this.giveBack(connection, false);
      }
    } catch (error) {
      // No connection: the starts waiting now fail, as a statement on the pool would have.
      for (const pending of this.pending.splice(0)) pending.reject(error);
    } finally {
      this.writers--;
    }
  }

  /** The next batch, in arrival order: one start per conversation, the others wait for the next. */
  private take(): Pending[] {
    const batch: Pending[] = [];
    const rest: Pending[] = [];
    const conversations = new Set<string>();
    let bytes = 0;
    for (const pending of this.pending) {
      const fits =
        batch.length === 0 || (batch.length < MAX_BATCH && bytes + pending.row.length <= MAX_BATCH_BYTES);
      if (fits && !conversations.has(pending.start.conversationId)) {
        conversations.add(pending.start.conversationId);
        bytes += pending.row.length;
        batch.push(pending);
      } else rest.push(pending);
    }
    this.pending = rest;
    // Two batches in flight lock the conversations they touch in one order, so they never deadlock.
    return batch.sort((a, b) => (a.start.conversationId < b.start.conversationId ? -1 : 1));
  }

  private async write(batch: Pending[], connection: Connection): Promise<void> {
    try {
      const written = await this.insert(batch, connection);
      for (const pending of batch) settle(pending, written);
    } catch (error) {
      if (batch.length === 1) return batch[0].reject(error);
      for (const pending of batch) {
        await this.connection()
          .then((fresh) => this.insert([pending], fresh))
          .catch(async (retryError: unknown) => {
            // The batch may have committed before its connection died: then each start's own row,
            // under this replica, is that start's write done (a retry of it fails on the key).
            const { start } = pending;
            if (!(await responseRowWritten(this.dataSource, start, 'owner_id', start.ownerId)))
              throw retryError;
            return new Set([start.responseId]);
          })
          .then((written) => settle(pending, written), pending.reject);
      }
    }
  }

  /** One statement for the batch; the connection is given back (destroyed if it failed). */
  private async insert(batch: Pending[], connection: Connection): Promise<Set<string>> {
    const rows = `[${batch.map((pending) => pending.row).join(',')}]`;
    // One replica's starts: the same owner and lease.
    const { ownerId, leaseMs } = batch[0].start;
    let failed = true;
    try {
      const { statement, more } = startsStatement(batch.map((pending) => pending.start));
      const written = await preparedQueryOn<{ id: string }>(connection.client, statement, [
        rows,
        ownerId,
        leaseMs,
        ...more,
      ]);
      failed = false;
      return new Set(written.map((row) => row.id));
    } finally {
      this.giveBack(connection, failed);
    }
  }

  /** A kept connection goes back to the free ones; one that failed is not trusted again. */
  private giveBack(connection: Connection, failed: boolean): void {
    if (connection.kept && !failed && !connection.dead && !this.closed) {
      this.free.push(connection);
      return;
    }
    if (connection.kept) this.kept--;
    connection.release(failed);
  }

  /** A kept connection that is free, or one from the pool (kept while fewer than WRITERS are). */
  private async connection(): Promise<Connection> {
    for (let free = this.free.pop(); free; free = this.free.pop()) {
      if (!free.dead) return free;
      this.kept--;
      free.release(true);
    }
    // TypeORM's pool (its query runners cannot hand back a broken connection to be destroyed).
    const pool = (this.dataSource.driver as unknown as { master: Pool }).master;
    const keep =
      !this.closed && this.kept < WRITERS && (pool.options.max ?? 0) >= MIN_POOL_FOR_OWN_CONNECTIONS;
    if (keep) this.kept++;
    let client: PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      if (keep) this.kept--;
      throw error;
    }
    // The server closed it (a restart, an idle timeout): not used again, and given back to the
    // pool at once when it is not in use (else when its statement fails).
    const onEnd = () => {
      if (connection.dead) return;
      connection.dead = true;
      const index = this.free.indexOf(connection);
      if (index === -1) return;
      this.free.splice(index, 1);
      this.kept--;
      connection.release(true);
    };
    const connection: Connection = {
      client,
      kept: keep,
      dead: false,
      release: (failed) => {
        client.removeListener('end', onEnd);
        client.removeListener('error', onEnd);
        // With an error, the pool destroys the connection instead of handing it out again.
        client.release(failed || connection.dead ? new Error('start-record connection failed') : undefined);
      },
    };
    client.on('end', onEnd);
    client.on('error', onEnd);
    return connection;
  }
}

/**
 * A start is done when the statement wrote its row; a continuing turn's row is not written when
 * its conversation is gone (deleted, or its user erased, since the turn read it): the turn fails
 * as a request naming a conversation that does not exist does (docs/architecture.md).
 */
function settle(pending: Pending, written: Set<string>): void {
  if (written.has(pending.start.responseId)) return pending.resolve();
  const continued = pending.start.continued;
  pending.reject(
    continued?.kind === 'response'
      ? new ApiError('response_not_found', `No response ${continued.id}`)
      : new ApiError('conversation_not_found', `No conversation ${continued?.id ?? 'with that id'}`),
  );
}

/** One start as an element of the statement's JSON array (`body` spliced in as the text it is). */
function startRow(start: TurnStart): string {
  const row = JSON.stringify({
    response_id: start.responseId,
    organization_id: start.organizationId,
    assistant_id: start.assistantId,
    conversation_id: start.conversationId,
    title: start.newConversationTitle ?? '',
    new_conversation: start.newConversation,
    previous_response_id: start.previousResponseId,
    user_id: start.userId,
    status: start.status,
    depth: start.depth,
    active_agent: start.activeAgent,
    instructions: start.instructions,
    input: start.input,
    transcript: start.transcript,
    created_at: start.createdAt,
    background: start.background,
    messages: start.messages.map(({ createdAt, ...message }) => ({ ...message, created_at: createdAt })),
  });
  return `${row.slice(0, -1)},"body":${start.body}}`;
}
