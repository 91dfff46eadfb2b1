/**
 * The opt-out rule, in SQL, for the statements that must apply it atomically: true when user $2
 * of organization $1 opted out of assistant $3 or of every assistant (with $3 NULL: of every
 * assistant only).
 */
export const OPTED_OUT_SQL = `EXISTS (
  SELECT 1 FROM memory_opt_outs
   WHERE organization_id = $1::uuid AND user_id = $2
     AND (assistant_id IS NULL OR assistant_id = $3::uuid)
)`;
