import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Three foreign keys' checks fewer per turn (one each for responses and usage_pending, one per message row) (docs/benchmarks.md, round "dbturn"). Each ran
 * `SELECT 1 … FOR KEY SHARE` on the parent through SPI: an index probe, a row lock with its WAL
 * record, an executor start and end. Three keys go; what each did is kept by other means:
 *
 * - `responses.conversation_id` → `conversations` (one check per turn) and
 *   `messages.conversation_id` → `conversations` (two). Every writer inserts a response from the
 *   conversation row its own statement inserts or updates (start records, final writes, JSON
 *   turns' groups) or its transaction holds `FOR UPDATE` (items appended), and its messages from
 *   that response row: a concurrent delete of the conversation waits for the commit, or the
 *   statement finds no conversation and writes nothing under it. Deleting a conversation (and so
 *   an assistant, an organization, a user's erasure) still deletes its responses, by the trigger
 *   below (on the `(conversation_id, created_at)` index), and each response's messages, by the
 *   trigger of 1796530000001; the keys of `response_events` and `response_event_batches` to
 *   `responses` stay.
 * - `usage_pending.organization_id` → `organizations` (one check per turn, a lock on the
 *   organization's row that every turn of the organization shares). Deleting an organization
 *   still deletes its pending usage, by the trigger below. A pending row of a turn that commits
 *   while its organization is being deleted is claimed by the flush and not added
 *   (usage-rollup-sql.ts), as the rollups' own keys would refuse it.
 *
 * The triggers are row-level AFTER DELETE, as the cascades were, and run on the embedded database.
 */
export class TurnKeyChecks1796670000201 implements MigrationInterface {
  name = 'TurnKeyChecks1796670000201';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE FUNCTION "responses_of_deleted_conversation"() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         DELETE FROM responses WHERE conversation_id = OLD.id;
         RETURN NULL;
       END $$`,
    );
    await queryRunner.query(
      `CREATE FUNCTION "usage_pending_of_deleted_organization"() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         DELETE FROM usage_pending WHERE organization_id = OLD.id;
         RETURN NULL;
       END $$`,
    );
    await queryRunner.query(
      'CREATE TRIGGER "conversations_delete_responses" AFTER DELETE ON "conversations" FOR EACH ROW EXECUTE FUNCTION "responses_of_deleted_conversation"()',
    );
    await queryRunner.query(
      'CREATE TRIGGER "organizations_delete_usage_pending" AFTER DELETE ON "organizations" FOR EACH ROW EXECUTE FUNCTION "usage_pending_of_deleted_organization"()',
    );
    await queryRunner.query('ALTER TABLE "responses" DROP CONSTRAINT "FK_5dabadc72f0058e33e384d72090"');
    await queryRunner.query('ALTER TABLE "messages" DROP CONSTRAINT "FK_3bc55a7c3f9ed54b520bb5cfe23"');
    await queryRunner.query('ALTER TABLE "usage_pending" DROP CONSTRAINT "FK_72f1972daff48bbe8d85f84fbc1"');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // The triggers deleted what the keys would have: these find nothing unless rows were written by hand.
    await queryRunner.query(
      'DELETE FROM "responses" r WHERE NOT EXISTS (SELECT 1 FROM "conversations" c WHERE c.id = r.conversation_id)',
    );
    await queryRunner.query(
      'DELETE FROM "messages" m WHERE NOT EXISTS (SELECT 1 FROM "conversations" c WHERE c.id = m.conversation_id)',
    );
    await queryRunner.query(
      'DELETE FROM "usage_pending" u WHERE NOT EXISTS (SELECT 1 FROM "organizations" o WHERE o.id = u.organization_id)',
    );
    await queryRunner.query(
      'ALTER TABLE "usage_pending" ADD CONSTRAINT "FK_72f1972daff48bbe8d85f84fbc1" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await queryRunner.query(
      'ALTER TABLE "messages" ADD CONSTRAINT "FK_3bc55a7c3f9ed54b520bb5cfe23" FOREIGN KEY ("conversation_id") REFERENCES "conversations"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await queryRunner.query(
      'ALTER TABLE "responses" ADD CONSTRAINT "FK_5dabadc72f0058e33e384d72090" FOREIGN KEY ("conversation_id") REFERENCES "conversations"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await queryRunner.query('DROP TRIGGER "organizations_delete_usage_pending" ON "organizations"');
    await queryRunner.query('DROP TRIGGER "conversations_delete_responses" ON "conversations"');
    await queryRunner.query('DROP FUNCTION "usage_pending_of_deleted_organization"()');
    await queryRunner.query('DROP FUNCTION "responses_of_deleted_conversation"()');
  }
}
