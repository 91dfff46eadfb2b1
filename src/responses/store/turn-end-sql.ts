import type { TurnRecord } from '../../turns/turn.types.js';
import { EVENT_BATCH_KEYS, eventBatchesCte } from './event-batch-sql.js';
import { conversationCte } from './conversation-move-sql.js';
import {
  insertMessages,
  messagesParam,
  namedStatement,
  TURN_ROW_COLUMNS,
  TURN_ROW_KEYS,
  turnRowSelect,
  turnRowValues,
} from './turn-sql.js';

/**
 * The final write of a turn's `responses` row (its start row is StartRecords'), one statement
 * either way: SAVE_TURN over the row its start wrote (or tried
 * to), INSERT_TURN(_NEW) for a turn stored whole; their parameters, named once (TURN_END_KEYS)
 * and valued once (turnEndValues).
 */

const TURN_END_KEYS = [
  ...TURN_ROW_KEYS,
  'output',
  'outputText',
  'transcript',
  'usage',
  'error',
  'messages',
  'body',
  'apiKeyId',
  'usageRows',
  'upstreamAttempts',
] as const;

/**
 * The columns the end of a turn sets on its running row (with their parameters and types), named
 * once for `turn_save`'s DO UPDATE and `turn_complete`'s UPDATE: a column added to one is in both.
 */
const END_COLUMNS = [
  ['status', 'status', 'varchar'],
  ['active_agent', 'activeAgent', 'varchar'],
  ['output', 'output', 'jsonb'],
  ['output_text', 'outputText', 'text'],
  ['transcript', 'transcript', 'jsonb'],
  ['usage', 'usage', 'jsonb'],
  ['error', 'error', 'jsonb'],
  ['completed_at', 'updatedAt', 'timestamptz'],
  ['body', 'body', 'json'],
  ['upstream_attempts', 'upstreamAttempts', 'jsonb'],
] as const;

/** The SET list of END_COLUMNS, each column's new value from `value`; the lease is cleared. */
export function endColumnsSet(
  value: (column: string, key: (typeof END_COLUMNS)[number][1], type: string) => string,
): string {
  const set = END_COLUMNS.map(([column, key, type]) => `${column} = ${value(column, key, type)}`);
  return `${set.join(', ')}, lease_expires_at = NULL`;
}

type TurnEndKey = (typeof TURN_END_KEYS)[number];
type TurnEndParams = Record<TurnEndKey, string>;
type TurnEndValues = Record<TurnEndKey, unknown>;

/** The parameters a turn's pending usage row is made of (pendingUsageCte, newTurnTail). */
type UsageKey =
  'organizationId' | 'updatedAt' | 'assistantId' | 'activeAgent' | 'apiKeyId' | 'userId' | 'usageRows';

/** The finished response's row, after the CTE `conversation`: every column but the start's lease. */
function insertResponse(p: TurnEndParams): string {
  return `INSERT INTO responses (${TURN_ROW_COLUMNS}, output, output_text, transcript,
                           usage, error, created_at, completed_at, body, upstream_attempts)
    SELECT ${turnRowSelect(p)}, ${p.output}::jsonb, ${p.outputText}::text, ${p.transcript}::jsonb, ${p.usage}::jsonb, ${p.error}::jsonb, ${p.createdAt}::timestamptz, ${p.updatedAt}::timestamptz, ${p.body}::json,
           ${p.upstreamAttempts}::jsonb
      FROM conversation`;
}

/**
 * The turn's usage, left pending for the flush into the rollups (UsageFlusher): a narrow row of
 * its own, so that concurrent turns of a tenant no longer upsert, and wait on, one shared rollup row.
 * A turn whose conversation is gone (deleted, or its user erased, while it ran: the CTE
 * `conversation` is empty) stores nothing else, but the upstream billed it: its usage is kept,
 * under no user, as an erasure folds a user's usage into the anonymous one. `outcome` (one row,
 * read once): whether the response row was written, and whether the conversation is gone; `kept`,
 * when the usage is stored (turn_settle's adds a response deleted meanwhile, under its user).
 */
export function pendingUsageCte(
  p: Record<UsageKey | 'responseId', string>,
  kept = 'outcome.stored OR outcome.gone',
): string {
  return `pending_usage AS (
    INSERT INTO usage_pending (response_id, organization_id, completed_at, assistant_id, specialist, api_key_id,
                               user_id, usage_rows)
    SELECT ${p.responseId}::uuid, ${p.organizationId}::uuid, ${p.updatedAt}::timestamptz, ${p.assistantId}::uuid,
           coalesce(${p.activeAgent}::varchar, ''), ${p.apiKeyId}::uuid,
           CASE WHEN outcome.gone THEN '' ELSE coalesce(${p.userId}::varchar, '') END, ${p.usageRows}::jsonb
      FROM outcome
     WHERE ${p.usageRows}::jsonb IS NOT NULL AND (${kept})
    -- A gone conversation's write has no row to guard it: run again (a retry after a lost reply), it
    -- finds its pending row and counts nothing twice (unless a flush took the row meanwhile).
    ON CONFLICT (response_id) DO NOTHING
  )`;
}

/**
 * The write's outcome, computed once for the statement (the usage and the answer read it): `stored`,
 * the response row was written; `gone`, no conversation under the turn's id any more (not: one of
 * another organization, which writes nothing). Gone: the CTE `conversation` updated nothing, and
 * no conversation of another organization holds the id: a conversation never changes
 * organization, so that read cannot be misled by the statement's snapshot, whereas "no
 * conversation at all" read in the snapshot still sees one whose deletion committed while the
 * UPDATE waited on its row lock (the UPDATE then skips it).
 */
function outcomeCte(p: TurnEndParams): string {
  return `outcome AS (
    SELECT EXISTS (SELECT 1 FROM response) AS stored,
           NOT EXISTS (SELECT 1 FROM conversation)
             AND NOT EXISTS (SELECT 1 FROM conversations
                              WHERE id = ${p.conversationId}::uuid AND organization_id <> ${p.organizationId}::uuid) AS gone
  )`;
}

/**
 * The outcome, the pending usage and the chat-history messages of a write whose conversation may
 * be gone, then the statement's answer: `stored`, 1 when the final write is done, its pending
 * usage written (the row won, or the conversation gone), 0 when the turn was cancelled or swept
 * meanwhile (TurnStore.saveTurn's caller then records the usage the turn knows, once).
 */
function turnEndTail(p: TurnEndParams, more = ''): string {
  return `${outcomeCte(p)}, ${pendingUsageCte(p)}${more}, stored_messages AS (
    ${insertMessages(p)}
  )
  SELECT (stored OR gone)::integer AS stored FROM outcome`;
}

/**
 * A finished turn whose start was recorded (or tried): conversation, response (completing the
 * start's row), chat-history messages and its pending usage; `more`: further CTEs.
 */
const saveTurnSql = (p: TurnEndParams, more = '') => `WITH ${conversationCte(p)}, response AS (
    ${insertResponse(p)}
    -- The row written when the turn started is completed, unless the turn was cancelled or
    -- swept meanwhile: then it stays as it is, and so do its messages.
    ON CONFLICT (id) DO UPDATE
       SET ${endColumnsSet((column) => `EXCLUDED.${column}`)}
     WHERE responses.status IN ('queued', 'in_progress') AND responses.organization_id = EXCLUDED.organization_id
    RETURNING id, conversation_id
  ), ${turnEndTail(p, more)}`;
export const SAVE_TURN = namedStatement('turn_save', TURN_END_KEYS, (p) => saveTurnSql(p));

/** A background turn's final write: `turn_save` and its events not yet stored (eventBatchesCte). */
export const SAVE_TURN_EVENTS = namedStatement(
  'turn_save_events',
  [...TURN_END_KEYS, ...EVENT_BATCH_KEYS],
  (p) => saveTurnSql(p, `, ${eventBatchesCte(p)}`),
);

/** The new conversation of a turn that starts one: nothing can exist under its fresh id. */
function newConversationCte(p: TurnEndParams): string {
  return `conversation AS (
  INSERT INTO conversations (id, organization_id, assistant_id, user_id, title, last_response_id,
                             last_response_created_at, created_at, updated_at)
  VALUES (${p.conversationId}::uuid, ${p.organizationId}::uuid, ${p.assistantId}::uuid, ${p.userId}::varchar, ${p.newConversationTitle}::varchar, ${p.responseId}::uuid, ${p.createdAt}::timestamptz, ${p.createdAt}::timestamptz, ${p.updatedAt}::timestamptz)
  RETURNING id
)`;
}

/**
 * A whole turn with no start row (a foreground JSON turn: nothing of it is observable before its
 * reply, docs/architecture.md), in one statement of plain INSERTs: no row exists under its
 * response id, so no ON CONFLICT on `responses`. A turn that continues a conversation moves it on
 * (only if it still exists: turnEndTail); one that starts it inserts it in the same statement, so
 * that conversation cannot be gone and the statement has no `outcome` to compute: its usage and its
 * answer follow the response row alone, as every write did before conversations could go mid-turn.
 */
const insertTurn = (
  name: string,
  conversation: (p: TurnEndParams) => string,
  tail: (p: TurnEndParams) => string,
) =>
  namedStatement(
    name,
    TURN_END_KEYS,
    (p) => `WITH ${conversation(p)}, response AS (
    ${insertResponse(p)}
    RETURNING id, conversation_id
  ), ${tail(p)}`,
  );

/**
 * After the response of a turn that starts its conversation (or completes its start row,
 * turn-complete-sql.ts): its usage, its messages, the answer. `more`: further CTEs.
 */
export function newTurnTail(p: Record<UsageKey | 'messages', string>, more = ''): string {
  return `pending_usage AS (
    INSERT INTO usage_pending (response_id, organization_id, completed_at, assistant_id, specialist, api_key_id,
                               user_id, usage_rows)
    SELECT response.id, ${p.organizationId}::uuid, ${p.updatedAt}::timestamptz, ${p.assistantId}::uuid,
           coalesce(${p.activeAgent}::varchar, ''), ${p.apiKeyId}::uuid, coalesce(${p.userId}::varchar, ''),
           ${p.usageRows}::jsonb
      FROM response WHERE ${p.usageRows}::jsonb IS NOT NULL
  ), stored_messages AS (
    ${insertMessages(p)}
  )${more}
  SELECT count(*)::integer AS stored FROM response`;
}

export const INSERT_TURN_NEW = insertTurn('turn_insert_new', newConversationCte, (p) => newTurnTail(p));
export const INSERT_TURN = insertTurn('turn_insert', conversationCte, (p) => turnEndTail(p));

/** The usage rows parameter: the columns of the rollups, as the flush reads them (usage_pending.usage_rows). */
export function usageRowsParam(rows: TurnRecord['usageRows']): string {
  return JSON.stringify(usageRowsValue(rows));
}

/** The usage rows as usage_pending.usage_rows holds them (usageRowsParam, and a group's row). */
export function usageRowsValue(rows: TurnRecord['usageRows']) {
  return rows.map((row) => ({
    model: row.model ?? '',
    currency: row.currency,
    turns: row.turns,
    input_tokens: row.inputTokens,
    cached_tokens: row.cachedTokens,
    output_tokens: row.outputTokens,
    reasoning_tokens: row.reasoningTokens,
    cost: row.cost,
  }));
}

/** The values of TURN_END_KEYS for a finished turn. */
export function turnEndValues(turn: TurnRecord): TurnEndValues {
  return { ...turnRowValues(turn, turn.completedAt), ...endValues(turn) };
}

/** The values a final write adds to the row's keys, whichever statement it is (turn-complete-sql.ts too). */
export function endValues(turn: TurnRecord) {
  return {
    output: JSON.stringify(turn.output),
    outputText: turn.outputText,
    transcript: JSON.stringify(turn.transcript),
    usage: turn.usage === null ? null : JSON.stringify(turn.usage),
    error: turn.error === null ? null : JSON.stringify(turn.error),
    messages: messagesParam(turn.messages),
    body: turn.body,
    apiKeyId: turn.apiKeyId,
    usageRows: turn.usageRows.length === 0 ? null : usageRowsParam(turn.usageRows),
    upstreamAttempts: turn.upstreamAttempts?.length ? JSON.stringify(turn.upstreamAttempts) : null,
  };
}
