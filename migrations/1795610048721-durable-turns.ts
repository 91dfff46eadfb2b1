import type { MigrationInterface, QueryRunner } from 'typeorm';

export class DurableTurns1795610048721 implements MigrationInterface {
  name = 'DurableTurns1795610048721';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "response_events" ("response_id" uuid NOT NULL, "sequence_number" integer NOT NULL, "event_type" character varying(96) NOT NULL, "data" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_a390acf17fa7604aa47ba24ad73" PRIMARY KEY ("response_id", "sequence_number"))',
    );
    await queryRunner.query('ALTER TABLE "responses" ADD "background" boolean NOT NULL DEFAULT false');
    await queryRunner.query('ALTER TABLE "responses" ADD "owner_id" character varying(64)');
    await queryRunner.query('ALTER TABLE "responses" ADD "lease_expires_at" TIMESTAMP WITH TIME ZONE');
    await queryRunner.query('ALTER TABLE "responses" ALTER COLUMN "completed_at" DROP NOT NULL');
    await queryRunner.query(
      'CREATE INDEX "IDX_responses_running_owner" ON "responses"  ("owner_id") WHERE status IN (\'queued\', \'in_progress\')',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_responses_running_lease" ON "responses"  ("lease_expires_at") WHERE status IN (\'queued\', \'in_progress\')',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_response_events_created_at" ON "response_events" ("created_at")',
    );
    await queryRunner.query(
      'ALTER TABLE "response_events" ADD CONSTRAINT "FK_a4a5b350453e8f21b60ab62416d" FOREIGN KEY ("response_id") REFERENCES "responses"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "response_events" DROP CONSTRAINT "FK_a4a5b350453e8f21b60ab62416d"');
    await queryRunner.query('DROP INDEX "public"."IDX_responses_running_lease"');
    await queryRunner.query('DROP INDEX "public"."IDX_responses_running_owner"');
    // Turns still running have no completion time; the older schema requires one.
    await queryRunner.query(
      'UPDATE "responses" SET "completed_at" = "created_at" WHERE "completed_at" IS NULL',
    );
    await queryRunner.query('ALTER TABLE "responses" ALTER COLUMN "completed_at" SET NOT NULL');
    await queryRunner.query('ALTER TABLE "responses" DROP COLUMN "lease_expires_at"');
    await queryRunner.query('ALTER TABLE "responses" DROP COLUMN "owner_id"');
    await queryRunner.query('ALTER TABLE "responses" DROP COLUMN "background"');
    await queryRunner.query('DROP INDEX "public"."IDX_response_events_created_at"');
    await queryRunner.query('DROP TABLE "response_events"');
  }
}
