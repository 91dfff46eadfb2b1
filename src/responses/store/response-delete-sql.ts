/**
 * The two statements of TurnStore.deleteResponse, in one transaction ($1 response id, $2
 * organization, $3 end user: the tenant is in both).
 */

/**
 * The conversation's row of this tenant's response, locked for the rest of the transaction: the
 * lock a writer of a response takes first (its UPDATE of the conversation, or `FOR UPDATE` for
 * appended items) waits for the deletion's commit, and the deletion waits for a writer holding it.
 * `FOR UPDATE`, not `FOR NO KEY UPDATE`: the row may be deleted next, which needs that mode.
 */
export const LOCK_RESPONSE_CONVERSATION = `SELECT c.id FROM conversations c
  WHERE c.id = (SELECT r.conversation_id FROM responses r
                 WHERE r.id = $1 AND r.organization_id = $2 AND r.user_id IS NOT DISTINCT FROM $3::varchar)
    AND c.organization_id = $2
  FOR UPDATE`;

/**
 * The response deleted; its conversation deleted when no other response is left in it (read in
 * this statement's snapshot, taken under the lock above: every response committed in the
 * conversation is seen, and none can be added until the commit), else its head moved back to the
 * previous turn when it was the head.
 */
export const DELETE_RESPONSE = `WITH deleted AS (
    DELETE FROM responses
     WHERE id = $1 AND organization_id = $2 AND user_id IS NOT DISTINCT FROM $3::varchar
    RETURNING id, conversation_id, previous_response_id
  ), emptied AS (
    DELETE FROM conversations c USING deleted d
     WHERE c.id = d.conversation_id AND c.organization_id = $2
       AND NOT EXISTS (SELECT 1 FROM responses r WHERE r.conversation_id = c.id AND r.id <> d.id)
    RETURNING c.id
  ), moved AS (
    -- The previous turn becomes the head, with its start time (read here, so the next turn's
    -- comparison stays on the conversation's locked row).
    UPDATE conversations c SET last_response_id = d.previous_response_id,
           last_response_created_at = (SELECT p.created_at FROM responses p
                                        WHERE p.id = d.previous_response_id AND p.organization_id = $2)
      FROM deleted d
     WHERE c.id = d.conversation_id AND c.organization_id = $2 AND c.last_response_id = d.id
       AND c.id NOT IN (SELECT id FROM emptied)
    RETURNING c.id
  )
  SELECT (SELECT count(*)::integer FROM deleted) AS deleted`;
