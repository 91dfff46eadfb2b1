import type { DataSource } from 'typeorm';
import { preparedQuery, type PreparedStatement } from '../../database/prepared-query.js';
import type { TurnRecord } from '../../turns/turn.types.js';
import { CONVERSATION_MOVED_BY_GROUP } from './conversation-move-sql.js';
import { usageRowsValue } from './turn-end-sql.js';
import { INSERT_ROWS_MESSAGES, TURN_ROW_COLUMNS } from './turn-sql.js';

/**
 * The final writes of many foreground JSON turns (turns stored whole, with no start row) in one
 * statement, the turns as one JSON array (`$1`): for each, what `turn_insert(_new)` writes for
 * one (turn-end-sql.ts). The conversations the group starts are inserted, the others only moved
 * on (an UPDATE, never an INSERT: a conversation deleted, or its user erased, while the turn ran
 * stays deleted, and of another organization it is not touched); each response is inserted when
 * its conversation row was written, with its messages; the pending usage of every turn stored or
 * whose conversation is gone (then under no user); the answer is the ids of those turns, the
 * `true` of TurnStore.insertTurn (the others: another organization's conversation, `false`). A
 * group names each conversation once (an UPDATE touches a row once per statement), so each
 * response joins its own conversation's row (by id and organization, so that even two rows naming
 * one id could not put one tenant's response under another's conversation). `body` is `json`: the text the client got, as written.
 */
const groupStatement = (name: string, conversation: string, gone?: string): PreparedStatement => ({
  name,
  text: `WITH s AS (
    SELECT * FROM json_to_recordset($1::json) AS s(
      response_id uuid, organization_id uuid, assistant_id uuid, conversation_id uuid, title varchar,
      new_conversation boolean, previous_response_id uuid, user_id varchar, status varchar, depth int,
      active_agent varchar, instructions text, input jsonb, output jsonb, output_text text, transcript jsonb,
      usage jsonb, error jsonb, created_at timestamptz, completed_at timestamptz, body json, api_key_id uuid,
      usage_rows jsonb, upstream_attempts jsonb, messages jsonb)
  ), ${conversation}, response AS (
    INSERT INTO responses (${TURN_ROW_COLUMNS}, output, output_text, transcript,
                           usage, error, created_at, completed_at, body, upstream_attempts)
    SELECT s.response_id, s.organization_id, s.assistant_id, conversation.id, s.previous_response_id, s.user_id,
           s.status, s.depth, s.active_agent, s.instructions, s.input, s.output, s.output_text, s.transcript,
           s.usage, s.error, s.created_at, s.completed_at, s.body, s.upstream_attempts
      FROM s JOIN conversation ON conversation.id = s.conversation_id AND conversation.organization_id = s.organization_id
    RETURNING id, organization_id, conversation_id, user_id
  ), outcome AS (
    SELECT s.*, EXISTS (SELECT 1 FROM response WHERE response.id = s.response_id) AS stored, ${gone ?? 'false'} AS gone
      FROM s
  ), pending_usage AS (
    INSERT INTO usage_pending (response_id, organization_id, completed_at, assistant_id, specialist, api_key_id,
                               user_id, usage_rows)
    SELECT response_id, organization_id, completed_at, assistant_id, coalesce(active_agent, ''), api_key_id,
           CASE WHEN gone THEN '' ELSE coalesce(user_id, '') END, usage_rows
      FROM outcome
     WHERE usage_rows IS NOT NULL AND (stored OR gone)
${gone ? GONE_USAGE_CONFLICT : ''}
  ), stored_messages AS (
    ${INSERT_ROWS_MESSAGES}
  )
  SELECT response_id AS id FROM outcome WHERE stored OR gone`,
});

/**
 * As turn_insert's: a gone conversation's write run again finds its pending row. Not in a group
 * whose turns all start their conversation (as turn_insert_new): none can be gone, and the
 * speculative insert would cost a WAL record per turn (round "savenarrow").
 */
const GONE_USAGE_CONFLICT = `    ON CONFLICT (response_id) DO NOTHING`;

/** The conversations a group starts (in a group of turns that all start one, every row of `s`). */
const startedConversations = (where: string) => `INSERT INTO conversations (id, organization_id, assistant_id,
                               user_id, title, last_response_id, last_response_created_at, created_at, updated_at)
    SELECT conversation_id, organization_id, assistant_id, user_id, title, response_id, created_at, created_at,
           completed_at
      FROM s${where}
    RETURNING id, organization_id`;

/**
 * A group with continuing turns. The continued ids are also given as an array, so that the update
 * probes the primary key instead of scanning the organization's conversations in the generic plan
 * (as `turn_starts`, start-records-sql.ts). Gone, as turn_insert's `outcome` (turn-end-sql.ts):
 * the update wrote no row, and no conversation of another organization holds the id.
 */
const INSERT_TURN_GROUP = groupStatement(
  'turn_insert_group',
  `started AS (
    ${startedConversations(' WHERE s.new_conversation')}
  ), continued AS (
    UPDATE conversations
       SET ${CONVERSATION_MOVED_BY_GROUP}
      FROM s
     WHERE NOT s.new_conversation AND conversations.id = s.conversation_id
       AND conversations.organization_id = s.organization_id
       AND conversations.id = ANY (ARRAY(SELECT conversation_id FROM s WHERE NOT s.new_conversation))
    RETURNING conversations.id, conversations.organization_id
  ), conversation AS (
    SELECT id, organization_id FROM started UNION ALL SELECT id, organization_id FROM continued
  )`,
  `(NOT s.new_conversation
      AND NOT EXISTS (SELECT 1 FROM continued WHERE continued.id = s.conversation_id)
      AND NOT EXISTS (SELECT 1 FROM conversations c
                       WHERE c.id = s.conversation_id AND c.organization_id <> s.organization_id))`,
);

/** A group of turns that all start their conversation: no update, none can be gone (`gone` false). */
const INSERT_TURN_GROUP_NEW = groupStatement(
  'turn_insert_group_new',
  `conversation AS (
    ${startedConversations('')}
  )`,
);

/**
 * The final writes of two turns or more (`rows`, their turnGroupRow) in one statement: the ids of
 * those stored. A lone turn takes turn_insert(_new).
 */
export async function writeTurnGroup(
  dataSource: DataSource,
  turns: TurnRecord[],
  rows: string[],
): Promise<Set<string>> {
  const statement = turns.every((turn) => turn.newConversation) ? INSERT_TURN_GROUP_NEW : INSERT_TURN_GROUP;
  const stored = await preparedQuery<{ id: string }>(dataSource, statement, [`[${rows.join(',')}]`]);
  return new Set(stored.map((row) => row.id));
}

/** One turn as an element of the statement's JSON array (`body` spliced in as the text it is). */
export function turnGroupRow(turn: TurnRecord): string {
  const row = JSON.stringify({
    response_id: turn.responseId,
    organization_id: turn.organizationId,
    assistant_id: turn.assistantId,
    conversation_id: turn.conversationId,
    title: turn.newConversationTitle ?? '',
    new_conversation: turn.newConversation === true,
    previous_response_id: turn.previousResponseId,
    user_id: turn.userId,
    status: turn.status,
    depth: turn.depth,
    active_agent: turn.activeAgent,
    instructions: turn.instructions,
    input: turn.input,
    output: turn.output,
    output_text: turn.outputText,
    transcript: turn.transcript,
    usage: turn.usage,
    error: turn.error,
    created_at: turn.createdAt,
    completed_at: turn.completedAt,
    api_key_id: turn.apiKeyId,
    usage_rows: turn.usageRows.length === 0 ? null : usageRowsValue(turn.usageRows),
    upstream_attempts: turn.upstreamAttempts?.length ? turn.upstreamAttempts : null,
    // The columns named one by one, as messagesParam does.
    messages: turn.messages.map((m) => ({
      id: m.id,
      role: m.role,
      content: m.content,
      position: m.position,
      created_at: m.createdAt,
    })),
  });
  return `${row.slice(0, -1)},"body":${turn.body ?? 'null'}}`;
}
