import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The Files API: each organization's uploaded files, their bytes (bytea, stored out of line by
 * PostgreSQL's TOAST) and the text extracted from them for later chunking (docs/knowledge.md).
 */
export class Files1795900000000 implements MigrationInterface {
  name = 'Files1795900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "files" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "user_id" character varying(256), "purpose" character varying(32) NOT NULL, "filename" character varying(512) NOT NULL, "media_type" character varying(255) NOT NULL, "bytes" bigint NOT NULL, "content" bytea NOT NULL, "text_status" character varying(16) NOT NULL, "extracted_text" text, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "expires_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_6c16b9093a142e0e7613b04a3d9" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_files_organization_recent" ON "files" ("organization_id", "created_at", "id") ',
    );
    await queryRunner.query(
      'ALTER TABLE "files" ADD CONSTRAINT "FK_385dd167bc3fe894f301c7537bb" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "files" DROP CONSTRAINT "FK_385dd167bc3fe894f301c7537bb"');
    await queryRunner.query('DROP INDEX "public"."IDX_files_organization_recent"');
    await queryRunner.query('DROP TABLE "files"');
  }
}
