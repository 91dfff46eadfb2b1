import { EVENT_BATCH_KEYS, eventBatchesCte } from './event-batch-sql.js';
import { conversationHeadCte } from './conversation-move-sql.js';
import { COMPLETE_KEYS, completedResponseCtes, type CompleteKey } from './turn-complete-sql.js';
import { pendingUsageCte } from './turn-end-sql.js';
import { insertMessages, namedStatement } from './turn-sql.js';

/**
 * The final write of a turn whose start row is known to be written, when `turn_complete` stored
 * nothing (TurnStore.completeTurn): a new statement, so a new snapshot, that decides the outcome.
 * Never an INSERT of the response: a row its start wrote and that is gone was deleted, and stays
 * deleted (`turn_save`'s upsert, which made good a start never written, wrote it again whole).
 * `outcome`, read once: `stored`, the row was completed (a running row that met a pending usage
 * row); `gone`, no conversation under the turn's id any more (turn-end-sql.ts, outcomeCte);
 * `deleted`, the conversation is there and the row is not (`DELETE /v1/responses/{id}`). Gone or
 * deleted: the turn's usage alone is kept (under no user when the conversation is gone, as an
 * erasure folds a user's usage; under its user otherwise) and the statement answers 1, as for a
 * stored turn: the client gets its answer, as for a conversation deleted mid-turn. None of them:
 * the turn was cancelled or swept meanwhile, nothing is written, and it answers 0.
 * A deletion that commits while this waits on the conversation's lock (after its snapshot) reads
 * as neither (the snapshot still shows the row): 0, and the caller reads the row, which is gone.
 */
const settleTurnSql = (p: Record<CompleteKey, string>, more = '') => `WITH ${completedResponseCtes(p)},
  ${conversationHeadCte(p, false)}, outcome AS (
    SELECT EXISTS (SELECT 1 FROM response) AS stored,
           NOT EXISTS (SELECT 1 FROM held)
             AND NOT EXISTS (SELECT 1 FROM conversations
                              WHERE id = ${p.conversationId}::uuid AND organization_id <> ${p.organizationId}::uuid) AS gone,
           EXISTS (SELECT 1 FROM held)
             AND NOT EXISTS (SELECT 1 FROM responses
                              WHERE id = ${p.responseId}::uuid AND organization_id = ${p.organizationId}::uuid) AS deleted
  ), ${pendingUsageCte(p, 'outcome.stored OR outcome.gone OR outcome.deleted')}, stored_messages AS (
    ${insertMessages(p)}
  )${more}
  SELECT (stored OR gone OR deleted)::integer AS stored FROM outcome`;

export const SETTLE_TURN = namedStatement('turn_settle', COMPLETE_KEYS, (p) => settleTurnSql(p));

/** A background turn's, with its events not yet stored (stored only with the row, eventBatchesCte). */
export const SETTLE_TURN_EVENTS = namedStatement(
  'turn_settle_events',
  [...COMPLETE_KEYS, ...EVENT_BATCH_KEYS],
  (p) => settleTurnSql(p, `, ${eventBatchesCte(p)}`),
);
