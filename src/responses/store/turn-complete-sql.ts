import type { TurnRecord } from '../../turns/turn.types.js';
import { EVENT_BATCH_KEYS, eventBatchesCte } from './event-batch-sql.js';
import { endColumnsSet, endValues, newTurnTail } from './turn-end-sql.js';
import { conversationHeadCte } from './conversation-move-sql.js';
import { namedStatement, runningByKey } from './turn-sql.js';

/**
 * The final write of a turn whose start row is known to be written (its start statement answered
 * the row, before `response.created`; a background turn's before its POST was answered): a plain
 * UPDATE of the columns the end sets, none of those the start wrote (`input`, `instructions`,
 * the thread keys...), instead of `turn_save`'s `INSERT … ON CONFLICT DO UPDATE` of the whole
 * row. It stores the turn only while its row runs under its organization, and answers 1 then. Any
 * other case (cancelled or swept meanwhile, conversation gone, row deleted) writes nothing, and
 * TurnStore.completeTurn then runs `turn_settle` (turn-settle-sql.ts), which decides it; so the
 * usage rules of those cases are `turn_settle`'s, and the pending usage here is a plain INSERT,
 * without the speculative insert: a running row rarely has one pending (a cancel's
 * recordEndedUsage), and then the key's violation hands the turn to `turn_settle` too.
 */
export const COMPLETE_KEYS = [
  'conversationId',
  'organizationId',
  'assistantId',
  'userId',
  'responseId',
  'createdAt',
  'updatedAt',
  'status',
  'activeAgent',
  'output',
  'outputText',
  'transcript',
  'usage',
  'error',
  'body',
  'upstreamAttempts',
  'messages',
  'apiKeyId',
  'usageRows',
] as const;

export type CompleteKey = (typeof COMPLETE_KEYS)[number];

/**
 * The conversation's row, locked before the response's (the order of the start, `turn_save` and
 * a deletion, TurnStore.deleteResponse): the lock a conversation's writers and deleters take
 * first. A deletion committed while this waited is seen by what follows, as the row's UPDATE
 * follows it: the conversation gone (no row here), or the response deleted (its UPDATE finds no
 * row, and the conversation is not moved onto it). `FOR NO KEY UPDATE`, the mode of the UPDATE
 * that comes next in the statement.
 */
export function heldConversationCte(p: Record<'conversationId' | 'organizationId', string>): string {
  return `held AS (
    SELECT id FROM conversations
     WHERE id = ${p.conversationId}::uuid AND organization_id IS NOT DISTINCT FROM ${p.organizationId}::uuid
       FOR NO KEY UPDATE
  )`;
}

/**
 * The conversation locked (`held`), then the turn's running row completed with the end columns
 * (`response`); turn_complete and turn_settle alike. The response is found by its key alone: the
 * held row is joined without a condition (one row or none), as a join on `conversation_id` could
 * let a generic plan walk the conversation's responses.
 */
export function completedResponseCtes(p: Record<CompleteKey, string>): string {
  return `${heldConversationCte(p)}, response AS (
    UPDATE responses
       SET ${endColumnsSet((_column, key, type) => `${p[key]}::${type}`)}
      FROM held
     WHERE responses.id = ${p.responseId}::uuid AND responses.organization_id = ${p.organizationId}::uuid
       AND ${runningByKey('responses.status')}
    RETURNING responses.id, responses.conversation_id
  )`;
}

/** The conversation then moved on only if the response was (conversationHeadCte). */
const completeTurnSql = (p: Record<CompleteKey, string>, own: boolean, more = '') =>
  `WITH ${completedResponseCtes(p)}, ${conversationHeadCte(p, own)}, ${newTurnTail(p, more)}`;

const completeTurn = (name: string, own: boolean) =>
  namedStatement(name, COMPLETE_KEYS, (p) => completeTurnSql(p, own));

/** A background turn's: with its events not yet stored (eventBatchesCte, as `turn_save_events`). */
const completeTurnEvents = (name: string, own: boolean) =>
  namedStatement(name, [...COMPLETE_KEYS, ...EVENT_BATCH_KEYS], (p) =>
    completeTurnSql(p, own, `, ${eventBatchesCte(p)}`),
  );

/** Which to run: `new`, the turn's start inserted its conversation (conversationHeadCte's `own`). */
export const COMPLETE_TURN = {
  new: completeTurn('turn_complete_new', true),
  continued: completeTurn('turn_complete', false),
};
export const COMPLETE_TURN_EVENTS = {
  new: completeTurnEvents('turn_complete_events_new', true),
  continued: completeTurnEvents('turn_complete_events', false),
};

/** The values of COMPLETE_KEYS for a finished turn (nothing of the start's columns is serialized). */
export function completeValues(turn: TurnRecord): Record<CompleteKey, unknown> {
  return {
    conversationId: turn.conversationId,
    organizationId: turn.organizationId,
    assistantId: turn.assistantId,
    userId: turn.userId,
    responseId: turn.responseId,
    createdAt: turn.createdAt,
    updatedAt: turn.completedAt,
    status: turn.status,
    activeAgent: turn.activeAgent,
    ...endValues(turn),
  };
}
