/*
 * The SQL both writers of the usage rollups share: the flush (UsageRollups), which adds turns'
 * pending usage, and the erasure of a user (TurnStore), which folds their rows into the anonymous ones.
 */

/** Adds a row's counts to the rollup row it conflicts with (`AS d`): usage_daily and usage_hourly alike. */
const ADD_COUNTS = `DO UPDATE
  SET turns = d.turns + EXCLUDED.turns,
      input_tokens = d.input_tokens + EXCLUDED.input_tokens,
      cached_tokens = d.cached_tokens + EXCLUDED.cached_tokens,
      output_tokens = d.output_tokens + EXCLUDED.output_tokens,
      reasoning_tokens = d.reasoning_tokens + EXCLUDED.reasoning_tokens,
      cost = d.cost + EXCLUDED.cost`;
export const ADD_TO_USAGE_ROW = `ON CONFLICT (organization_id, day, assistant_id, specialist, api_key_id, user_id, currency) ${ADD_COUNTS}`;
export const ADD_TO_HOURLY_ROW = `ON CONFLICT (organization_id, hour, assistant_id, specialist, api_key_id, user_id, model, currency) ${ADD_COUNTS}`;
export const USAGE_COUNTS = 'turns, input_tokens, cached_tokens, output_tokens, reasoning_tokens, cost';
const SUMMED_COUNTS = `sum(u.turns), sum(u.input_tokens), sum(u.cached_tokens), sum(u.output_tokens),
           sum(u.reasoning_tokens), sum(u.cost)`;

/**
 * One statement that adds the `usage_pending` rows `claim` deletes (a `DELETE … RETURNING *`) to
 * both rollups and answers how many turns it claimed (each added, unless its organization is
 * gone). Counting only what this very statement deleted is what makes a turn count once: two
 * replicas flushing the same row cannot both delete it. Each
 * rollup key is upserted once (grouped), in key order, so that concurrent flushes lock rows in
 * the same order and do not deadlock.
 */
export function flushPendingSql(claim: string): string {
  return `WITH claimed AS (
    ${claim}
  ), u AS (
    SELECT c.organization_id, c.completed_at, c.assistant_id, c.specialist, c.api_key_id, c.user_id,
           coalesce(r.model, '') AS model, r.currency, r.turns, r.input_tokens, r.cached_tokens, r.output_tokens,
           r.reasoning_tokens, r.cost
      FROM claimed c, jsonb_to_recordset(c.usage_rows) AS r(model varchar, currency varchar, turns bigint,
           input_tokens bigint, cached_tokens bigint, output_tokens bigint, reasoning_tokens bigint, cost numeric)
     -- A row whose organization is gone (its turn committed while the organization was being
     -- deleted: usage_pending has no foreign key) is claimed and dropped, as the cascade would have.
     WHERE EXISTS (SELECT 1 FROM organizations o WHERE o.id = c.organization_id)
  ), daily AS (
    INSERT INTO usage_daily AS d (organization_id, day, assistant_id, specialist, api_key_id, user_id, currency,
                                  ${USAGE_COUNTS})
    SELECT u.organization_id, (u.completed_at AT TIME ZONE 'UTC')::date AS day, u.assistant_id, u.specialist,
           u.api_key_id, u.user_id, u.currency, ${SUMMED_COUNTS}
      FROM u GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7
    ${ADD_TO_USAGE_ROW}
  ), hourly AS (
    INSERT INTO usage_hourly AS d (organization_id, hour, assistant_id, specialist, api_key_id, user_id, model,
                                   currency, ${USAGE_COUNTS})
    SELECT u.organization_id, date_trunc('hour', u.completed_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS hour,
           u.assistant_id, u.specialist, u.api_key_id, u.user_id, u.model, u.currency, ${SUMMED_COUNTS}
      FROM u GROUP BY 1, 2, 3, 4, 5, 6, 7, 8 ORDER BY 1, 2, 3, 4, 5, 6, 7, 8
    ${ADD_TO_HOURLY_ROW}
  )
  SELECT count(*)::integer AS turns FROM claimed`;
}

/** A rollup table's key, as its primary key orders it: the columns before `user_id`, and after. */
const ROLLUP_KEYS = {
  usage_daily: { before: 'organization_id, day, assistant_id, specialist, api_key_id', after: 'currency' },
  usage_hourly: {
    before: 'organization_id, hour, assistant_id, specialist, api_key_id',
    after: 'model, currency',
  },
} as const;

/**
 * The erasure of a user ($2) of an organization ($1) in one rollup table: two statements, run in
 * the erasure's transaction in this order. The first locks every row the fold writes, the user's
 * and the anonymous ones they fold into (created at zero when missing), in key order, as the
 * flush's upserts do: deleting the user's rows in scan order while the flush adds to them in key
 * order could deadlock. The second, which waits for nothing more, moves the counts.
 */
function foldUserSql(table: keyof typeof ROLLUP_KEYS): [lock: string, fold: string] {
  const { before, after } = ROLLUP_KEYS[table];
  const key = `${before}, user_id, ${after}`;
  const addTo = table === 'usage_daily' ? ADD_TO_USAGE_ROW : ADD_TO_HOURLY_ROW;
  const lock = `WITH own AS (SELECT ${before}, ${after} FROM ${table} WHERE organization_id = $1 AND user_id = $2)
    INSERT INTO ${table} AS d (${key}, ${USAGE_COUNTS})
    SELECT ${key}, 0, 0, 0, 0, 0, 0
      FROM (SELECT ${before}, $2::varchar AS user_id, ${after} FROM own
            UNION ALL SELECT ${before}, ''::varchar, ${after} FROM own) k
     ORDER BY ${key}
    ON CONFLICT (${key}) DO UPDATE SET turns = d.turns`;
  const fold = `WITH moved AS (DELETE FROM ${table} WHERE organization_id = $1 AND user_id = $2 RETURNING *)
    INSERT INTO ${table} AS d (${key}, ${USAGE_COUNTS})
    SELECT ${before}, '', ${after}, ${USAGE_COUNTS} FROM moved ORDER BY ${key}
    ${addTo}`;
  return [lock, fold];
}

/**
 * A user's erasure in the rollups, in the order the flush locks them (usage_pending, which the
 * erasure folds first, then usage_daily, then usage_hourly): the user's rows folded into the
 * anonymous ones, so the organization's totals stay. Each statement takes $1 the organization, $2 the user.
 */
export const FOLD_USER_USAGE: readonly string[] = [
  ...foldUserSql('usage_daily'),
  ...foldUserSql('usage_hourly'),
];
