import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The Conversations API: a conversation carries `metadata`, and may exist before any assistant
 * answers in it (created with POST /v1/conversations), so `assistant_id` becomes nullable there.
 * Items added through the API are stored as a turn without a model call, whose `assistant_id` is
 * null: that null is what tells such a row from a response.
 */
export class ConversationsApi1795500000000 implements MigrationInterface {
  name = 'ConversationsApi1795500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "conversations" ADD "metadata" jsonb NOT NULL DEFAULT '{}'`);
    await queryRunner.query('ALTER TABLE "conversations" ALTER COLUMN "assistant_id" DROP NOT NULL');
    await queryRunner.query('ALTER TABLE "responses" ALTER COLUMN "assistant_id" DROP NOT NULL');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Rows only the Conversations API can create have no place in the older schema.
    await queryRunner.query('DELETE FROM "conversations" WHERE "assistant_id" IS NULL');
    await queryRunner.query('DELETE FROM "responses" WHERE "assistant_id" IS NULL');
    await queryRunner.query('ALTER TABLE "responses" ALTER COLUMN "assistant_id" SET NOT NULL');
    await queryRunner.query('ALTER TABLE "conversations" ALTER COLUMN "assistant_id" SET NOT NULL');
    await queryRunner.query('ALTER TABLE "conversations" DROP COLUMN "metadata"');
  }
}
