import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Usage by UTC hour and by model (docs/usage.md): `usage_hourly`, written beside `usage_daily` by
 * the turn's one statement and read by the usage report for every bucket size. The usage recorded
 * so far is copied in at midnight of its day, model `''` (not recorded then), so that daily and
 * monthly reports give the same totals as before.
 */
export class UsageHourly1796440000001 implements MigrationInterface {
  name = 'UsageHourly1796440000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "usage_hourly" ("organization_id" uuid NOT NULL, "hour" TIMESTAMP WITH TIME ZONE NOT NULL, "assistant_id" uuid NOT NULL, "specialist" character varying(64) NOT NULL, "api_key_id" uuid NOT NULL, "user_id" character varying(256) NOT NULL, "model" character varying(256) NOT NULL, "currency" character varying(8) NOT NULL, "turns" bigint NOT NULL DEFAULT \'0\', "input_tokens" bigint NOT NULL DEFAULT \'0\', "cached_tokens" bigint NOT NULL DEFAULT \'0\', "output_tokens" bigint NOT NULL DEFAULT \'0\', "reasoning_tokens" bigint NOT NULL DEFAULT \'0\', "cost" numeric(20,8) NOT NULL DEFAULT \'0\', CONSTRAINT "PK_usage_hourly" PRIMARY KEY ("organization_id", "hour", "assistant_id", "specialist", "api_key_id", "user_id", "model", "currency"))',
    );
    await queryRunner.query(
      'ALTER TABLE "usage_hourly" ADD CONSTRAINT "FK_3af8ed84c6de619f51ff954077f" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await queryRunner.query(
      `INSERT INTO "usage_hourly" (organization_id, hour, assistant_id, specialist, api_key_id, user_id, model, currency,
                                   turns, input_tokens, cached_tokens, output_tokens, reasoning_tokens, cost)
       SELECT organization_id, day::timestamp AT TIME ZONE 'UTC', assistant_id, specialist, api_key_id, user_id, '',
              currency, turns, input_tokens, cached_tokens, output_tokens, reasoning_tokens, cost
         FROM "usage_daily"`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "usage_hourly" DROP CONSTRAINT "FK_3af8ed84c6de619f51ff954077f"');
    await queryRunner.query('DROP TABLE "usage_hourly"');
  }
}
