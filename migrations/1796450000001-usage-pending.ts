import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Usage rolled up off the turn's transaction (docs/usage.md): each stored turn leaves one narrow
 * `usage_pending` row (its rollup dimensions and its usage per model and currency) in its own
 * statement, and a replica's flush deletes the rows it adds to `usage_daily` and `usage_hourly` in
 * one transaction. A row left by a replica that died is added by any replica later, once: whoever
 * deletes it counts it. No index besides the key: the table holds about a second of turns.
 */
export class UsagePending1796450000001 implements MigrationInterface {
  name = 'UsagePending1796450000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "usage_pending" ("response_id" uuid NOT NULL, "organization_id" uuid NOT NULL, "completed_at" TIMESTAMP WITH TIME ZONE NOT NULL, "assistant_id" uuid NOT NULL, "specialist" character varying(64) NOT NULL, "api_key_id" uuid NOT NULL, "user_id" character varying(256) NOT NULL, "usage_rows" jsonb NOT NULL, CONSTRAINT "PK_bf430f96114566c88165027cd9c" PRIMARY KEY ("response_id"))',
    );
    await queryRunner.query(
      'ALTER TABLE "usage_pending" ADD CONSTRAINT "FK_72f1972daff48bbe8d85f84fbc1" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Usage not yet rolled up is added before the table goes, so reverting loses no turn.
    await queryRunner.query(
      `WITH counted AS (
         SELECT p.organization_id, p.completed_at, p.assistant_id, p.specialist, p.api_key_id, p.user_id,
                coalesce(u.model, '') AS model, u.currency, u.turns, u.input_tokens, u.cached_tokens,
                u.output_tokens, u.reasoning_tokens, u.cost
           FROM "usage_pending" p, jsonb_to_recordset(p.usage_rows) AS u(model varchar, currency varchar,
                turns bigint, input_tokens bigint, cached_tokens bigint, output_tokens bigint,
                reasoning_tokens bigint, cost numeric)
       ), daily AS (
         INSERT INTO "usage_daily" AS d (organization_id, day, assistant_id, specialist, api_key_id, user_id, currency,
                                        turns, input_tokens, cached_tokens, output_tokens, reasoning_tokens, cost)
         SELECT organization_id, (completed_at AT TIME ZONE 'UTC')::date, assistant_id, specialist, api_key_id,
                user_id, currency, sum(turns), sum(input_tokens), sum(cached_tokens), sum(output_tokens),
                sum(reasoning_tokens), sum(cost)
           FROM counted GROUP BY 1, 2, 3, 4, 5, 6, 7
         ON CONFLICT (organization_id, day, assistant_id, specialist, api_key_id, user_id, currency) DO UPDATE
           SET turns = d.turns + EXCLUDED.turns, input_tokens = d.input_tokens + EXCLUDED.input_tokens,
               cached_tokens = d.cached_tokens + EXCLUDED.cached_tokens,
               output_tokens = d.output_tokens + EXCLUDED.output_tokens,
               reasoning_tokens = d.reasoning_tokens + EXCLUDED.reasoning_tokens, cost = d.cost + EXCLUDED.cost
       )
       INSERT INTO "usage_hourly" AS d (organization_id, hour, assistant_id, specialist, api_key_id, user_id, model,
                                        currency, turns, input_tokens, cached_tokens, output_tokens,
                                        reasoning_tokens, cost)
       SELECT organization_id, date_trunc('hour', completed_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', assistant_id,
              specialist, api_key_id, user_id, model, currency, sum(turns), sum(input_tokens), sum(cached_tokens),
              sum(output_tokens), sum(reasoning_tokens), sum(cost)
         FROM counted GROUP BY 1, 2, 3, 4, 5, 6, 7, 8
       ON CONFLICT (organization_id, hour, assistant_id, specialist, api_key_id, user_id, model, currency) DO UPDATE
         SET turns = d.turns + EXCLUDED.turns, input_tokens = d.input_tokens + EXCLUDED.input_tokens,
             cached_tokens = d.cached_tokens + EXCLUDED.cached_tokens,
             output_tokens = d.output_tokens + EXCLUDED.output_tokens,
             reasoning_tokens = d.reasoning_tokens + EXCLUDED.reasoning_tokens, cost = d.cost + EXCLUDED.cost`,
    );
    await queryRunner.query('ALTER TABLE "usage_pending" DROP CONSTRAINT "FK_72f1972daff48bbe8d85f84fbc1"');
    await queryRunner.query('DROP TABLE "usage_pending"');
  }
}
