/**
 * How a turn's statements move its conversation on (its time and its head): the start record
 * (StartRecords), the final write of a recorded start (turn_complete, turn_settle) and of any other
 * (turn_save, turn_insert, turn_insert_group).
 */

/**
 * The conversation a continuing turn's final write moves on: only UPDATEd, never inserted, so a
 * conversation deleted (or its user erased) while the turn ran stays deleted and the CTE is empty
 * (nothing of the turn is stored under it, docs/architecture.md). Its start row, or the turn that
 * started it (INSERT_TURN_NEW), created it.
 */
export function conversationCte(
  p: Record<ConversationKey | 'assistantId' | 'newConversationTitle', string>,
): string {
  return movedConversationCte(p, {
    assistantId: `${p.assistantId}::uuid`,
    title: `${p.newConversationTitle}::varchar`,
  });
}

/**
 * The same update for the final write of a turn whose start row was written: that start already
 * gave the conversation its assistant and title (nothing clears them), so only the time and the
 * head move (turn-complete-sql.ts, turn-settle-sql.ts), and only when the CTE `response` wrote
 * the turn's row: a row deleted meanwhile (`DELETE /v1/responses/{id}`) is not made the head.
 * `own`: the turn's start inserted the conversation, with its head's start time, and every writer
 * since sets both head columns together (a start, an append of items, a deleted head's
 * successor), so the fallback for a row without one is not needed.
 */
export function conversationHeadCte(p: Record<ConversationKey, string>, own: boolean): string {
  return movedConversationCte(p, undefined, !own, 'AND EXISTS (SELECT 1 FROM response)');
}

type ConversationKey = 'conversationId' | 'organizationId' | 'responseId' | 'createdAt' | 'updatedAt';

function movedConversationCte(
  p: Record<ConversationKey, string>,
  firstTurn?: Record<'assistantId' | 'title', string>,
  legacyHead = true,
  condition = '',
): string {
  const moved = conversationMoved(
    {
      responseId: `${p.responseId}::uuid`,
      createdAt: `${p.createdAt}::timestamptz`,
      updatedAt: `${p.updatedAt}::timestamptz`,
    },
    firstTurn,
    legacyHead,
  );
  // `IS NOT DISTINCT FROM` keeps the tenant check out of index selection: with `=`, a generic plan
  // could tie the (organization_id, user_id, updated_at) index with the primary key and walk every
  // conversation of the organization (docs/benchmarks.md, round "headplan").
  return `conversation AS (
  UPDATE conversations
     SET ${moved}
   WHERE id = ${p.conversationId}::uuid
     AND organization_id IS NOT DISTINCT FROM ${p.organizationId}::uuid ${condition}
  RETURNING id
)`;
}

/**
 * The SET list that moves a conversation on for a turn (its id, start time, write time):
 * `updated_at` (the time of its latest message) never goes back, and the head
 * (`last_response_id`, which the next turn continues) moves only to a turn started no earlier
 * than the head's: of two overlapping turns, the older one finishing last does not take the head
 * back from the newer (docs/architecture.md). The head's start time is the row's own
 * `last_response_created_at`: a column of the locked row, read again when the statement waited
 * for the lock, so a newer head committed meanwhile counts. A row that has none (written before
 * migration 1796650000001, or its head deleted) falls back to the head's `responses` row, read in
 * the statement's snapshot: a head deleted meanwhile reads NULL and the turn takes its place.
 */
function conversationMoved(
  v: Record<'responseId' | 'createdAt' | 'updatedAt', string>,
  firstTurn?: Record<'assistantId' | 'title', string>,
  legacyHead = true,
) {
  const headCreatedAt = legacyHead
    ? `coalesce(conversations.last_response_created_at,
                                (SELECT head.created_at FROM responses head
                                  WHERE head.id = conversations.last_response_id
                                    AND head.organization_id = conversations.organization_id))`
    : 'conversations.last_response_created_at';
  const headIsNewer = `${headCreatedAt} > ${v.createdAt}`;
  const moved = `updated_at = GREATEST(conversations.updated_at, ${v.updatedAt}),
         last_response_id = CASE WHEN ${headIsNewer} THEN conversations.last_response_id ELSE ${v.responseId} END,
         last_response_created_at = CASE WHEN ${headIsNewer} THEN conversations.last_response_created_at
                                         ELSE ${v.createdAt} END`;
  if (!firstTurn) return moved;
  return `${moved},
         -- A conversation created through the Conversations API takes its first assistant and title here.
         assistant_id = COALESCE(conversations.assistant_id, ${firstTurn.assistantId}),
         title = CASE WHEN conversations.title = '' THEN ${firstTurn.title} ELSE conversations.title END`;
}

/** A continuing turn's start moves its conversation on (StartRecords, `s`: the start's row). */
export const CONVERSATION_MOVED_BY_START = conversationMoved(
  { responseId: 's.response_id', createdAt: 's.created_at', updatedAt: 's.created_at' },
  { assistantId: 's.assistant_id', title: 's.title' },
);

/** A continuing JSON turn's final write in a group moves its conversation on (`s`: the turn's row). */
export const CONVERSATION_MOVED_BY_GROUP = conversationMoved(
  { responseId: 's.response_id', createdAt: 's.created_at', updatedAt: 's.completed_at' },
  { assistantId: 's.assistant_id', title: 's.title' },
);
