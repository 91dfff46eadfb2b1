import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Usage accounting: a daily rollup of every turn's tokens (and cost, when the model has prices),
 * upserted by the turn's one write statement, and an optional monthly token budget per organization.
 */
export class Usage1795700000000 implements MigrationInterface {
  name = 'Usage1795700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "usage_daily" ("organization_id" uuid NOT NULL, "day" date NOT NULL, "assistant_id" uuid NOT NULL, "specialist" character varying(64) NOT NULL, "api_key_id" uuid NOT NULL, "user_id" character varying(256) NOT NULL, "currency" character varying(8) NOT NULL, "turns" bigint NOT NULL DEFAULT 0, "input_tokens" bigint NOT NULL DEFAULT 0, "cached_tokens" bigint NOT NULL DEFAULT 0, "output_tokens" bigint NOT NULL DEFAULT 0, "reasoning_tokens" bigint NOT NULL DEFAULT 0, "cost" numeric(20,8) NOT NULL DEFAULT 0, CONSTRAINT "PK_usage_daily" PRIMARY KEY ("organization_id", "day", "assistant_id", "specialist", "api_key_id", "user_id", "currency"))',
    );
    await queryRunner.query(
      'ALTER TABLE "usage_daily" ADD CONSTRAINT "FK_ffb88c355555d223df0c5754a8f" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await queryRunner.query('ALTER TABLE "organizations" ADD "monthly_token_budget" bigint');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "organizations" DROP COLUMN "monthly_token_budget"');
    await queryRunner.query('ALTER TABLE "usage_daily" DROP CONSTRAINT "FK_ffb88c355555d223df0c5754a8f"');
    await queryRunner.query('DROP TABLE "usage_daily"');
  }
}
