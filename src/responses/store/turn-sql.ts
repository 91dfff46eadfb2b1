import { StoredMessages } from '../../llm/stored-messages.js';
import type { ThreadHead, TurnRecord, TurnRow, TurnStatus } from '../../turns/turn.types.js';
import type { OutputItem } from '../../turns/output-item.types.js';
import type { PreparedStatement } from '../../database/prepared-query.js';
import type { DataSource } from 'typeorm';

/**
 * Whether a write whose outcome is unknown (its connection was lost after the commit, or its
 * replay failed on its own keys) is stored: the response row stands under its organization with
 * the value only that write leaves in `column` (a start's `owner_id`, this replica; a whole
 * turn's final `status`). A failed read counts as no: the caller reports the write's own error.
 */
export async function responseRowWritten(
  dataSource: DataSource,
  row: { responseId: string; organizationId: string },
  column: 'owner_id' | 'status',
  value: string,
): Promise<boolean> {
  try {
    const rows: unknown[] = await dataSource.query(
      `SELECT 1 FROM responses WHERE id = $1 AND organization_id = $2 AND ${column} = $3`,
      [row.responseId, row.organizationId, value],
    );
    return rows.length > 0;
  } catch {
    return false;
  }
}

/**
 * A prepared statement written with named parameters: `sql` gets each name's `$n` (in the order
 * of `keys`), and `bind` puts the values in that order. The text sent is plain positional SQL,
 * so the statement is prepared once per connection as before and costs the same.
 */
export interface NamedStatement<K extends string> extends PreparedStatement {
  bind(values: Record<K, unknown>): unknown[];
}

export function namedStatement<const K extends string>(
  name: string,
  keys: readonly K[],
  sql: (p: Record<K, string>) => string,
): NamedStatement<K> {
  const p = Object.fromEntries(keys.map((key, index) => [key, `$${index + 1}`])) as Record<K, string>;
  return { name, text: sql(p), bind: (values) => keys.map((key) => values[key]) };
}

/** A turn that still runs (the sweep's and the lease's partial indexes hold exactly these rows). */
export const RUNNING = `status IN ('queued', 'in_progress')`;

/**
 * RUNNING for a statement that finds its row by key: `IS TRUE` keeps the planner from matching it
 * to those partial indexes, which it would otherwise scan whole, the key a mere filter, whenever
 * statistics saw no running row (docs/benchmarks.md, round "savenarrow", the review's plan).
 */
export const runningByKey = (status: string) => `(${status} IN ('queued', 'in_progress')) IS TRUE`;

/**
 * The `responses` row's columns that a turn's start and its end write alike, first in both
 * statements: the conversation (created or touched by the row), then the response's own.
 */
export const TURN_ROW_KEYS = [
  'conversationId',
  'organizationId',
  'assistantId',
  'userId',
  'newConversationTitle',
  'responseId',
  'createdAt',
  'updatedAt',
  'previousResponseId',
  'status',
  'depth',
  'activeAgent',
  'instructions',
  'input',
] as const;

type TurnRowKey = (typeof TURN_ROW_KEYS)[number];

/** The values of TURN_ROW_KEYS for a turn's start or its end (`updatedAt`: when it is written). */
export function turnRowValues(turn: TurnRow, updatedAt: Date): Record<TurnRowKey, unknown> {
  return {
    conversationId: turn.conversationId,
    organizationId: turn.organizationId,
    assistantId: turn.assistantId,
    userId: turn.userId,
    newConversationTitle: turn.newConversationTitle ?? '',
    responseId: turn.responseId,
    createdAt: turn.createdAt,
    updatedAt,
    previousResponseId: turn.previousResponseId,
    status: turn.status,
    depth: turn.depth,
    activeAgent: turn.activeAgent,
    instructions: turn.instructions,
    input: JSON.stringify(turn.input),
  };
}

type TurnRowParams = Record<TurnRowKey | 'messages', string>;

/** The `responses` columns of TURN_ROW_KEYS, and their values as the statements' SELECT lists them. */
export const TURN_ROW_COLUMNS =
  'id, organization_id, assistant_id, conversation_id, previous_response_id, user_id,\n                           status, depth, active_agent, instructions, input';

export function turnRowSelect(p: TurnRowParams): string {
  return `${p.responseId}::uuid, ${p.organizationId}::uuid, ${p.assistantId}::uuid, conversation.id, ${p.previousResponseId}::uuid, ${p.userId}::varchar, ${p.status}::varchar, ${p.depth}::int, ${p.activeAgent}::varchar,
           ${p.instructions}::text, ${p.input}::jsonb`;
}

/** Inserts the chat-history messages (JSON array in `messages`) of the row of the CTE `response`. */
export function insertMessages(p: Record<'organizationId' | 'userId' | 'messages', string>): string {
  return `INSERT INTO messages (id, organization_id, conversation_id, response_id, user_id, role, content, position, created_at)
  SELECT m.id, ${p.organizationId}::uuid, response.conversation_id, response.id, ${p.userId}::varchar, m.role, m.content, m.position, m.created_at
    FROM response, jsonb_to_recordset(${p.messages}::jsonb) AS m(id uuid, role varchar, content text, position smallint, created_at timestamptz)`;
}

/**
 * The chat-history messages of a statement of many turns (`s`: the turns' rows, each with its
 * `messages` array), for each row of the CTE `response` (the start records, a JSON turns' group).
 */
export const INSERT_ROWS_MESSAGES = `INSERT INTO messages (id, organization_id, conversation_id, response_id, user_id, role, content, position,
                          created_at)
    SELECT m.id, response.organization_id, response.conversation_id, response.id, response.user_id, m.role,
           m.content, m.position, m.created_at
      FROM response JOIN s ON s.response_id = response.id,
           jsonb_to_recordset(s.messages) AS m(id uuid, role varchar, content text, position smallint,
                                               created_at timestamptz)`;

/** The messages parameter of `insertMessages`. */
export function messagesParam(messages: TurnRecord['messages']): string {
  // The columns named one by one: a rest/spread copy took ~1% of a JSON turn's CPU.
  return JSON.stringify(
    messages.map((m) => ({
      id: m.id,
      role: m.role,
      content: m.content,
      position: m.position,
      created_at: m.createdAt,
    })),
  );
}

/**
 * The walk of a thread from the response that `start` selects back to its first turn (the
 * tenant is checked on every row: `organization` is the parameter of its id). Each step is a
 * LATERAL lookup of the previous response by its key with LIMIT 1: the planner runs it as one
 * primary-key probe per turn on any table of more than a page (the cheaper plan on one page),
 * also as a generic plan, so the walk can be prepared. As a join, on a small table or as a
 * generic plan, it hashed a sequential scan of all responses at every step (200 turns: 16.8 ms
 * against 0.5 ms, docs/benchmarks.md). Rows come in walk order (threadHead sorts them).
 *
 * A row is three columns: the depth, the transcript as JSON text, and `head`, the newest turn's
 * own columns as one JSON object (null on older rows). Fewer columns per row cut the service's
 * work per turn of the thread (a row object and a field each); one string aggregate of all
 * transcripts cost the database more than it saved (docs/benchmarks.md, round "threadcost").
 */
export function threadWalk(start: string, organization: string): string {
  return `WITH RECURSIVE chain AS (
    SELECT previous_response_id, depth, transcript,
           json_build_object('id', id, 'conversation_id', conversation_id, 'status', status,
                             'output', output, 'active_agent', active_agent) AS head
      FROM responses
     WHERE ${start}
    UNION ALL
    SELECT r.previous_response_id, r.depth, r.transcript, NULL::json
      FROM chain c,
           LATERAL (SELECT previous_response_id, depth, transcript FROM responses
                     WHERE id = c.previous_response_id AND organization_id = ${organization} LIMIT 1) r
  )
  SELECT head, depth, transcript::text AS transcript FROM chain`;
}

/**
 * The thread ending at a response of this organization, assistant and user: a prepared statement
 * (PreparedStatement), as parsing and planning the recursive walk on every call cost more database
 * CPU than running it on short threads (docs/benchmarks.md).
 */
export const LOAD_THREAD: PreparedStatement = {
  name: 'thread_load',
  text: threadWalk(
    'id = $1 AND organization_id = $2 AND assistant_id = $3 AND user_id IS NOT DISTINCT FROM $4::varchar',
    '$2',
  ),
};

/** The newest turn's columns, in the first row of a thread's walk. */
interface ThreadWalkHead {
  id: string;
  conversation_id: string;
  status: TurnStatus;
  output: OutputItem[];
  active_agent: string | null;
}

/** A row of a thread's walk (threadWalk); only the newest carries `head`. */
export interface ChainRow {
  head: ThreadWalkHead | null;
  depth: number;
  /** The turn's transcript, a JSON array as text (kept as text: StoredMessages). */
  transcript: string;
}

/** The end of a thread from its walk (rows in any order); null when the walk found no turn. */
export function threadHead(walk: ChainRow[]): ThreadHead | null {
  const newest = walk.find((row) => row.head !== null);
  if (!newest?.head) return null;
  const rows = walk.toSorted((a, b) => a.depth - b.depth);
  const head = newest.head;
  return {
    responseId: head.id,
    conversationId: head.conversation_id,
    depth: newest.depth,
    status: head.status,
    output: head.output,
    activeAgent: head.active_agent,
    // Kept as the text the rows brought: a continued turn sends it on without parsing it.
    history: StoredMessages.fromArrays(rows.map((row) => row.transcript)),
    // The walk reaches depth 1 unless a turn on the way was deleted (DELETE /v1/responses/{id}).
    complete: rows[0].depth === 1,
  };
}
