import type { MigrationInterface, QueryRunner } from 'typeorm';

export class UserClaimsAndMemory1795301293355 implements MigrationInterface {
  name = 'UserClaimsAndMemory1795301293355';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "user_claims" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "user_id" character varying(256) NOT NULL, "claim_key" character varying(128) NOT NULL, "claim_value" jsonb NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "UQ_user_claims_owner_key" UNIQUE ("organization_id", "user_id", "claim_key"), CONSTRAINT "PK_d57edcf140adf0577ee653fb261" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE TABLE "memory_items" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "user_id" character varying(256) NOT NULL, "assistant_id" uuid NOT NULL, "content" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_51723cba91bef40857ccc626d4f" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_memory_items_space_recent" ON "memory_items"  ("organization_id", "user_id", "assistant_id", "created_at", "id") ',
    );
    await queryRunner.query(
      'CREATE TABLE "memory_opt_outs" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "user_id" character varying(256) NOT NULL, "assistant_id" uuid, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_a9c2d783f258b04f45bbf669753" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "UQ_memory_opt_outs_one_assistant" ON "memory_opt_outs"  ("organization_id", "user_id", "assistant_id") WHERE "assistant_id" IS NOT NULL',
    );
    await queryRunner.query(
      'CREATE UNIQUE INDEX "UQ_memory_opt_outs_all_assistants" ON "memory_opt_outs"  ("organization_id", "user_id") WHERE "assistant_id" IS NULL',
    );
    await queryRunner.query(
      'ALTER TABLE "user_claims" ADD CONSTRAINT "FK_747da8f443eba676360449fd3c8" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await queryRunner.query(
      'ALTER TABLE "memory_items" ADD CONSTRAINT "FK_b7937f563237c05a89fb3da989a" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await queryRunner.query(
      'ALTER TABLE "memory_items" ADD CONSTRAINT "FK_4093165fdaaeaea1aafcf65f603" FOREIGN KEY ("assistant_id") REFERENCES "assistants"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await queryRunner.query(
      'ALTER TABLE "memory_opt_outs" ADD CONSTRAINT "FK_66065c68d98e348b7f8032c0797" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await queryRunner.query(
      'ALTER TABLE "memory_opt_outs" ADD CONSTRAINT "FK_1b202c9dd097321192bcb288487" FOREIGN KEY ("assistant_id") REFERENCES "assistants"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "memory_opt_outs" DROP CONSTRAINT "FK_1b202c9dd097321192bcb288487"');
    await queryRunner.query('ALTER TABLE "memory_opt_outs" DROP CONSTRAINT "FK_66065c68d98e348b7f8032c0797"');
    await queryRunner.query('ALTER TABLE "memory_items" DROP CONSTRAINT "FK_4093165fdaaeaea1aafcf65f603"');
    await queryRunner.query('ALTER TABLE "memory_items" DROP CONSTRAINT "FK_b7937f563237c05a89fb3da989a"');
    await queryRunner.query('ALTER TABLE "user_claims" DROP CONSTRAINT "FK_747da8f443eba676360449fd3c8"');
    await queryRunner.query('DROP INDEX "public"."UQ_memory_opt_outs_all_assistants"');
    await queryRunner.query('DROP INDEX "public"."UQ_memory_opt_outs_one_assistant"');
    await queryRunner.query('DROP TABLE "memory_opt_outs"');
    await queryRunner.query('DROP INDEX "public"."IDX_memory_items_space_recent"');
    await queryRunner.query('DROP TABLE "memory_items"');
    await queryRunner.query('DROP TABLE "user_claims"');
  }
}
