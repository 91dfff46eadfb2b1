import type { MigrationInterface, QueryRunner } from 'typeorm';

export class Foundation1795300641295 implements MigrationInterface {
  name = 'Foundation1795300641295';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "organizations" ("id" uuid NOT NULL, "slug" character varying(64) NOT NULL, "name" character varying(200) NOT NULL, "rate_limit_per_minute" integer, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "UQ_963693341bd612aa01ddf3a4b68" UNIQUE ("slug"), CONSTRAINT "PK_6b031fcd0863e3f6b44230163f9" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE TABLE "api_keys" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "name" character varying(200) NOT NULL, "key_hash" character(64) NOT NULL, "hint" character varying(32) NOT NULL, "scopes" text array NOT NULL, "legacy" boolean NOT NULL DEFAULT false, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "last_used_at" TIMESTAMP WITH TIME ZONE, "revoked_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "UQ_57384430aa1959f4578046c9b81" UNIQUE ("key_hash"), CONSTRAINT "PK_5c8a79801b44bd27b79228e1dad" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_a283bdef18876e525aefaec042" ON "api_keys"  ("organization_id") ',
    );
    await queryRunner.query(
      'CREATE TABLE "assistants" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "name" character varying(200) NOT NULL, "instructions" text NOT NULL DEFAULT \'\', "model" jsonb NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_640d8c25456e38fc20f6081d754" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_e6d82b704b4ce44bab95f63cd5" ON "assistants"  ("organization_id", "name") ',
    );
    await queryRunner.query(
      'ALTER TABLE "api_keys" ADD CONSTRAINT "FK_a283bdef18876e525aefaec042f" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await queryRunner.query(
      'ALTER TABLE "assistants" ADD CONSTRAINT "FK_4aee4c5ae3f3f62605442933c52" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "assistants" DROP CONSTRAINT "FK_4aee4c5ae3f3f62605442933c52"');
    await queryRunner.query('ALTER TABLE "api_keys" DROP CONSTRAINT "FK_a283bdef18876e525aefaec042f"');
    await queryRunner.query('DROP INDEX "public"."IDX_e6d82b704b4ce44bab95f63cd5"');
    await queryRunner.query('DROP TABLE "assistants"');
    await queryRunner.query('DROP INDEX "public"."IDX_a283bdef18876e525aefaec042"');
    await queryRunner.query('DROP TABLE "api_keys"');
    await queryRunner.query('DROP TABLE "organizations"');
  }
}
