import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The audit log becomes append-only in the database itself: a trigger refuses every UPDATE and
 * DELETE of a row, and TRUNCATE of the table, whoever runs it (the service, the CLI, a console).
 * `request_id` is from now on the id the server gave the request; the id a client sent in
 * `x-request-id` is kept beside it in `client_request_id`.
 */
export class AuditAppendOnly1795800000300 implements MigrationInterface {
  name = 'AuditAppendOnly1795800000300';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "audit_log" ADD "client_request_id" character varying(128)');
    await queryRunner.query(
      `CREATE FUNCTION "audit_log_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END
$$`,
    );
    await queryRunner.query(
      'CREATE TRIGGER "audit_log_no_update_delete" BEFORE UPDATE OR DELETE ON "audit_log" FOR EACH ROW EXECUTE FUNCTION "audit_log_append_only"()',
    );
    await queryRunner.query(
      'CREATE TRIGGER "audit_log_no_truncate" BEFORE TRUNCATE ON "audit_log" FOR EACH STATEMENT EXECUTE FUNCTION "audit_log_append_only"()',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TRIGGER "audit_log_no_truncate" ON "audit_log"');
    await queryRunner.query('DROP TRIGGER "audit_log_no_update_delete" ON "audit_log"');
    await queryRunner.query('DROP FUNCTION "audit_log_append_only"()');
    await queryRunner.query('ALTER TABLE "audit_log" DROP COLUMN "client_request_id"');
  }
}
