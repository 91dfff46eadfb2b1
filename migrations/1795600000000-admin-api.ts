import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The admin API's audit log. The new `admin` key scope needs no change: scopes are a text array. */
export class AdminApi1795600000000 implements MigrationInterface {
  name = 'AdminApi1795600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "audit_log" ("id" uuid NOT NULL, "organization_id" uuid, "actor_type" character varying(16) NOT NULL, "actor_id" character varying(255) NOT NULL, "actor_issuer" character varying(2048), "action" character varying(32) NOT NULL, "resource_type" character varying(32) NOT NULL, "resource_id" character varying(255) NOT NULL, "before" jsonb, "after" jsonb, "request_id" character varying(128), "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_audit_log" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_audit_log_org_created" ON "audit_log" ("organization_id", "created_at", "id") ',
    );
    await queryRunner.query('CREATE INDEX "IDX_audit_log_created" ON "audit_log" ("created_at", "id") ');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX "public"."IDX_audit_log_created"');
    await queryRunner.query('DROP INDEX "public"."IDX_audit_log_org_created"');
    await queryRunner.query('DROP TABLE "audit_log"');
  }
}
