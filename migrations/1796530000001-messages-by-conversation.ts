import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Chat-history messages keyed for what reads them, with one index entry fewer per message and no
 * lock on the response row (docs/benchmarks.md, cut P5). Every read of `messages` names the
 * conversation (the chat-history branch, the rewrite of a turn's message), so one
 * `(conversation_id, response_id)` index replaces `(response_id)` and `(conversation_id,
 * created_at)` (nothing reads messages in `created_at` order). The foreign key to `responses` goes:
 * its cascade was the only delete of a response's messages that did not name the conversation, and
 * `TurnStore.deleteResponse` now deletes them itself, in its statement. A conversation's delete
 * still cascades to its messages (`conversation_id`, the index's first column), and so does an
 * organization's or an assistant's, through their conversations.
 */
export class MessagesByConversation1796530000001 implements MigrationInterface {
  name = 'MessagesByConversation1796530000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "messages" DROP CONSTRAINT "FK_17fbdbee18cb51511d3c6bf534a"');
    await queryRunner.query('DROP INDEX "public"."IDX_17fbdbee18cb51511d3c6bf534"');
    await queryRunner.query('DROP INDEX "public"."IDX_8584a1974e1ca95f4861d975ff"');
    await queryRunner.query(
      'CREATE INDEX "IDX_messages_conversation_response" ON "messages" ("conversation_id", "response_id")',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX "public"."IDX_messages_conversation_response"');
    await queryRunner.query(
      'CREATE INDEX "IDX_8584a1974e1ca95f4861d975ff" ON "messages" ("conversation_id", "created_at")',
    );
    await queryRunner.query('CREATE INDEX "IDX_17fbdbee18cb51511d3c6bf534" ON "messages" ("response_id")');
    // Messages whose response was deleted while the key was gone would fail the key: they go first.
    await queryRunner.query(
      'DELETE FROM "messages" m WHERE NOT EXISTS (SELECT 1 FROM "responses" r WHERE r.id = m.response_id)',
    );
    await queryRunner.query(
      'ALTER TABLE "messages" ADD CONSTRAINT "FK_17fbdbee18cb51511d3c6bf534a" FOREIGN KEY ("response_id") REFERENCES "responses"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
  }
}
