import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The start time of a conversation's head on the conversation's own row (docs/architecture.md, "A
 * conversation's head"): a turn's final write compares it with its own under the row's lock, so a
 * newer head that committed while the write waited counts (a column of the locked row is read
 * again after the wait, a head's row in `responses` only in the statement's snapshot). Nullable,
 * no default: adding it rewrites nothing; a row written before it (NULL) falls back to the head's
 * `responses` row, as before, until its next turn sets it.
 */
export class ConversationHeadCreatedAt1796650000001 implements MigrationInterface {
  name = 'ConversationHeadCreatedAt1796650000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'ALTER TABLE "conversations" ADD "last_response_created_at" TIMESTAMP WITH TIME ZONE',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "conversations" DROP COLUMN "last_response_created_at"');
  }
}
