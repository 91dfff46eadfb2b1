import type { PreparedStatement } from '../../database/prepared-query.js';
import type { TurnStart } from '../../turns/turn.types.js';
import { CONVERSATION_MOVED_BY_START } from './conversation-move-sql.js';
import { INSERT_ROWS_MESSAGES, TURN_ROW_COLUMNS } from './turn-sql.js';

/**
 * A foreground batch's commit does not wait for its WAL to reach the disk (`$4`, true when no
 * start of the batch is a background turn's): `synchronous_commit` off for this transaction alone,
 * set while the statement runs and read by its commit. The rows are committed and visible to every
 * session at once; only a crash of the PostgreSQL server within ~3 × wal_writer_delay can lose
 * them, and the turn's final write, synchronous, flushes them with it (docs/architecture.md,
 * Durable turns). CASE keeps the call out of a batch that must stay synchronous; the condition is
 * on every answered row, so it runs whenever the batch wrote a response.
 */
const ASYNC_COMMIT = `CASE WHEN $4::boolean THEN set_config('synchronous_commit', 'off', true) IS NOT NULL ELSE true END`;

/**
 * The start records of many turns in one statement, the rows as one JSON array: for each, the
 * conversation (inserted for a turn that starts one, else moved on), the response `in_progress`
 * under this replica's lease, and the user's messages; the same rows `turn_start` writes for one.
 * `body` is `json`, so the text the start announced is kept as written. A continuing turn's
 * conversation is only UPDATEd, never inserted: one deleted (or its user erased) since the turn
 * read it stays deleted, and the turn's response row is not written (the statement answers the
 * ids of the rows it wrote; StartRecords fails the others). A batch names each conversation once
 * (an UPDATE touches a row once per statement), so each response joins its own conversation's row.
 * In the mixed batch (`turn_starts`), the continued ids are also given as an array, so that the
 * update probes the primary key instead of scanning the organization's conversations
 * (docs/benchmarks.md, round "headplan").
 * `conversation`: the CTE (or CTEs) that answer the batch's conversations' ids.
 */
const recordStarts = (name: string, conversation: string) => ({
  name,
  text: `WITH s AS (
    SELECT * FROM json_to_recordset($1::json) AS s(
      response_id uuid, organization_id uuid, assistant_id uuid, conversation_id uuid, title varchar,
      new_conversation boolean, previous_response_id uuid, user_id varchar, status varchar, depth int,
      active_agent varchar, instructions text, input jsonb, transcript jsonb, created_at timestamptz,
      background boolean, body json, messages jsonb)
  ), ${conversation}, response AS (
    INSERT INTO responses (${TURN_ROW_COLUMNS}, output, output_text, transcript,
                           created_at, background, owner_id, lease_expires_at, body)
    SELECT s.response_id, s.organization_id, s.assistant_id, conversation.id, s.previous_response_id, s.user_id,
           s.status, s.depth, s.active_agent, s.instructions, s.input, '[]'::jsonb, '', s.transcript,
           s.created_at, s.background, $2::varchar, now() + $3::int * interval '1 millisecond', s.body
      FROM s JOIN conversation ON conversation.id = s.conversation_id
    RETURNING id, organization_id, conversation_id, user_id
  ), stored_messages AS (
    ${INSERT_ROWS_MESSAGES}
  )
  SELECT id FROM response WHERE ${ASYNC_COMMIT}`,
});

/** The conversations a batch starts (in a batch of starts that all start one, every row of `s`). */
const startedConversations = (
  where: string,
) => `INSERT INTO conversations (id, organization_id, assistant_id, user_id, title, last_response_id,
                               last_response_created_at, created_at, updated_at)
    SELECT conversation_id, organization_id, assistant_id, user_id, title, response_id, created_at, created_at,
           created_at
      FROM s${where}
    RETURNING id`;

/** A continuing start's conversation moved on: the rows of `conversations` that `where` selects, joined to `s`. */
const continuedConversations = (where: string) => `UPDATE conversations
       SET ${CONVERSATION_MOVED_BY_START}
      FROM s
     WHERE NOT s.new_conversation AND conversations.id = s.conversation_id AND ${where}
    RETURNING conversations.id`;

/**
 * Three shapes of one statement, chosen per batch (startsStatement). A batch with continuing
 * turns: the conversations started are inserted, the others moved on. Its generic plan, on a
 * table without statistics (the bench's, and any before its first ANALYZE), scans all
 * conversations for the batch's ids (docs/benchmarks.md, round "dbcost"), so a batch of one
 * continuing start (the usual batch) takes RECORD_CONTINUED_START, which names the conversation
 * as parameters: always one primary-key probe. A batch of starts that all start their
 * conversation (the first turn of every conversation) takes RECORD_NEW_STARTS: the same rows
 * without the update, its join and its subqueries, which its executor set up on every call.
 */
const RECORD_STARTS = recordStarts(
  'turn_starts',
  `started AS (
    ${startedConversations(' WHERE s.new_conversation')}
  ), continued AS (
    ${continuedConversations(`conversations.organization_id = s.organization_id
       AND conversations.id = ANY (ARRAY(SELECT conversation_id FROM s WHERE NOT s.new_conversation))`)}
  ), conversation AS (
    SELECT id FROM started UNION ALL SELECT id FROM continued
  )`,
);
// `IS NOT DISTINCT FROM`: the tenant check kept out of index selection (conversation-move-sql.ts).
const RECORD_CONTINUED_START = recordStarts(
  'turn_start_continued',
  `conversation AS (
    ${continuedConversations('conversations.id = $5::uuid AND conversations.organization_id IS NOT DISTINCT FROM $6::uuid')}
  )`,
);
const RECORD_NEW_STARTS = recordStarts(
  'turn_starts_new',
  `conversation AS (
    ${startedConversations('')}
  )`,
);

/**
 * The statement for a batch, and its parameters after the rows, owner and lease: whether its
 * commit may skip the WAL flush (ASYNC_COMMIT: a background turn's start is the only receipt its
 * client gets before it goes away, so a batch with one stays synchronous), then the statement's own.
 */
export function startsStatement(batch: TurnStart[]): { statement: PreparedStatement; more: unknown[] } {
  if (batch.length === 0) throw new Error('A batch of starts is never empty');
  const async = batch.every((start) => !start.background);
  if (batch.every((start) => start.newConversation)) return { statement: RECORD_NEW_STARTS, more: [async] };
  if (batch.length > 1) return { statement: RECORD_STARTS, more: [async] };
  const { conversationId, organizationId } = batch[0];
  return { statement: RECORD_CONTINUED_START, more: [async, conversationId, organizationId] };
}
