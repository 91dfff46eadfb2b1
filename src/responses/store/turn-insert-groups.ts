import { Logger } from '@nestjs/common';
import { isDatabaseUnavailable } from '../../common/errors/database-outage.js';
import type { TurnRecord } from '../../turns/turn.types.js';
import { turnGroupRow } from './turn-insert-groups-sql.js';

/** The most turns, and bytes of rows, one statement carries (a burst beyond goes in the next ones). */
const MAX_GROUP = 64;
const MAX_GROUP_BYTES = 1024 * 1024;
/**
 * Group statements in flight at once. One: the final writes that arrive while it runs wait for it
 * and go together in the next. Two made smaller groups and more database CPU per turn at 32
 * clients, for a throughput gain this machine could not resolve (docs/benchmarks.md, round
 * "jsongroup").
 */
const WRITERS = 1;
/**
 * A write still running after this long (waiting on a lock a deletion holds, say) stops holding
 * back the next: the drain goes on beside it, so one stuck row never stalls the replica's other
 * JSON turns for longer than this.
 */
const STALL_MS = 1000;

/** How a group's writes reach the database (TurnStore's statements). */
export interface TurnGroupWriter {
  /** One statement for a group of two or more: the ids of the turns stored (insertTurn's `true`). */
  writeGroup(turns: TurnRecord[], rows: string[]): Promise<Set<string>>;
  /** A lone turn, or a turn of a refused group: the single statement, with its own recovery. */
  writeOne(turn: TurnRecord): Promise<boolean>;
  /** Whether the turn's final write is stored (for a group whose outcome is unknown). */
  written(turn: TurnRecord): Promise<boolean>;
}

interface Pending {
  turn: TurnRecord;
  /** The turn as an element of the group statement's JSON array (made only for a group). */
  row?: string;
  resolve: (stored: boolean) => void;
  reject: (error: unknown) => void;
}

/**
 * The final writes of this replica's foreground JSON turns, committed in groups
 * (docs/architecture.md, "Durable turns"): a final write goes out at once when no group statement
 * is in flight (a lone turn waits for nothing: no timer), and those that arrive while one is go
 * together in the next statement, one round trip, one executor start and one commit for all. A
 * group the database refuses (any error) is retried turn by turn with the single statement, so
 * one turn's error fails that turn alone. Statements run on the pool like any other: a JSON turn
 * has no first token to protect, unlike a start record (StartRecords).
 */
export class TurnInsertGroups {
  private readonly logger = new Logger('TurnStore');
  private pending: Pending[] = [];
  private writers = 0;

  constructor(private readonly writer: TurnGroupWriter) {}

  /** Resolves once the turn's final write is committed: insertTurn's answer. */
  insert(turn: TurnRecord): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.pending.push({ turn, resolve, reject });
      if (this.writers < WRITERS) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.writers++;
    try {
      while (this.pending.length > 0) {
        const writing = this.write(this.take());
        let timer: NodeJS.Timeout | undefined;
        const stalled = new Promise<void>((resolve) => (timer = setTimeout(resolve, STALL_MS)));
        // write() never rejects: each turn's own promise carries its outcome.
        await Promise.race([writing, stalled]);
        clearTimeout(timer);
      }
    } finally {
      this.writers--;
    }
  }

  /** The next group, in arrival order: one turn per conversation, the others wait for the next. */
  private take(): Pending[] {
    // A lone turn is not serialized for a group: it takes the single statement.
    if (this.pending.length === 1) return this.pending.splice(0);
    const group: Pending[] = [];
    const rest: Pending[] = [];
    const conversations = new Set<string>();
    let bytes = 0;
    for (const pending of this.pending) {
      const row = rowOf(pending);
      if (row === undefined) continue;
      const fits = group.length === 0 || (group.length < MAX_GROUP && bytes + row.length <= MAX_GROUP_BYTES);
      if (fits && !conversations.has(pending.turn.conversationId)) {
        conversations.add(pending.turn.conversationId);
        bytes += row.length;
        group.push(pending);
      } else rest.push(pending);
    }
    this.pending = rest;
    // Groups lock the conversations they touch in about this order (the plan decides the exact
    // one); a deadlock with a deletion is refused like any error, and its turns written one by one.
    return group.sort((a, b) => (a.turn.conversationId < b.turn.conversationId ? -1 : 1));
  }

  private async write(group: Pending[]): Promise<void> {
    if (group.length === 1) return this.writeOne(group[0]);
    let stored: Set<string>;
    try {
      stored = await this.writer.writeGroup(
        group.map((pending) => pending.turn),
        group.map((pending) => pending.row ?? turnGroupRow(pending.turn)),
      );
    } catch (error) {
      if (isDatabaseUnavailable(error)) {
        // Its outcome unknown (a connection lost, maybe after the commit): as for a lone turn,
        // what is stored is read, never written again (a replay could undo an erasure meanwhile).
        await Promise.all(group.map((pending) => this.recover(pending, error)));
        return;
      }
      // Refused: each turn's single statement decides, so one turn's error fails that turn alone.
      // At most one turn per conversation, so they can go at once.
      const code = (error as { code?: unknown }).code;
      this.logger.warn({
        msg: 'a group of final writes was refused; its turns are written one by one',
        turns: group.length,
        code,
      });
      await Promise.all(group.map((pending) => this.writeOne(pending)));
      return;
    }
    for (const pending of group) pending.resolve(stored.has(pending.turn.responseId));
  }

  private async recover(pending: Pending, error: unknown): Promise<void> {
    if (await this.writer.written(pending.turn).catch(() => false)) pending.resolve(true);
    else pending.reject(error);
  }

  private async writeOne(pending: Pending): Promise<void> {
    try {
      pending.resolve(await this.writer.writeOne(pending.turn));
    } catch (error) {
      pending.reject(error);
    }
  }
}

/** The pending turn's row, made once; a turn that cannot be serialized fails alone (undefined). */
function rowOf(pending: Pending): string | undefined {
  try {
    return (pending.row ??= turnGroupRow(pending.turn));
  } catch (error) {
    pending.reject(error);
    return undefined;
  }
}
