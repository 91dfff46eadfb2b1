import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Chat-history messages keyed for what reads them, with one index entry fewer per message and no
 * lock on the response row (docs/benchmarks.md, cut P5). Every read of `messages` names the
 * conversation (the chat-history branch, the rewrite of a turn's message), so one
 * `(conversation_id, response_id)` index replaces `(response_id)` and `(conversation_id,
 * created_at)` (nothing reads messages in `created_at` order). The foreign key to `responses`
 * goes, and with it the `FOR KEY SHARE` lock each message insert took on its response row; its
 * cascade is kept by a trigger on deleting a response, which finds the messages on the new index.
 * A trigger costs nothing when a turn inserts, and every delete of a response keeps deleting its
 * messages: `DELETE /v1/responses/{id}`, on this release and on the previous one during a rolling
 * upgrade (docs/deployment.md), erasure, and the cascades from conversations (and so from
 * assistants and organizations), which also still delete messages by `conversation_id`.
 */
export class MessagesByConversation1796530000001 implements MigrationInterface {
  name = 'MessagesByConversation1796530000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    // The new index first: building it locks only inserts into `messages` (SHARE). The key's drop
    // locks `messages` and `responses` exclusively until the commit, so it comes last, after
    // every step that reads the table, and holds that lock for moments, not for the build
    // (replicas of the previous release keep reading `responses` during a rolling upgrade).
    await queryRunner.query(
      'CREATE INDEX "IDX_messages_conversation_response" ON "messages" ("conversation_id", "response_id")',
    );
    await queryRunner.query(
      `CREATE FUNCTION "messages_of_deleted_response"() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         DELETE FROM messages WHERE conversation_id = OLD.conversation_id AND response_id = OLD.id;
         RETURN NULL;
       END $$`,
    );
    await queryRunner.query('ALTER TABLE "messages" DROP CONSTRAINT "FK_17fbdbee18cb51511d3c6bf534a"');
    await queryRunner.query('DROP INDEX "public"."IDX_17fbdbee18cb51511d3c6bf534"');
    await queryRunner.query('DROP INDEX "public"."IDX_8584a1974e1ca95f4861d975ff"');
    await queryRunner.query(
      'CREATE TRIGGER "responses_delete_messages" AFTER DELETE ON "responses" FOR EACH ROW EXECUTE FUNCTION "messages_of_deleted_response"()',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TRIGGER "responses_delete_messages" ON "responses"');
    await queryRunner.query('DROP FUNCTION "messages_of_deleted_response"()');
    await queryRunner.query('DROP INDEX "public"."IDX_messages_conversation_response"');
    await queryRunner.query(
      'CREATE INDEX "IDX_8584a1974e1ca95f4861d975ff" ON "messages" ("conversation_id", "created_at")',
    );
    await queryRunner.query('CREATE INDEX "IDX_17fbdbee18cb51511d3c6bf534" ON "messages" ("response_id")');
    // The trigger deleted what the key would have: this finds nothing unless rows were written by hand.
    await queryRunner.query(
      'DELETE FROM "messages" m WHERE NOT EXISTS (SELECT 1 FROM "responses" r WHERE r.id = m.response_id)',
    );
    await queryRunner.query(
      'ALTER TABLE "messages" ADD CONSTRAINT "FK_17fbdbee18cb51511d3c6bf534a" FOREIGN KEY ("response_id") REFERENCES "responses"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
  }
}
