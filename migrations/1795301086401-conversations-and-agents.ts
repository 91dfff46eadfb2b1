import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ConversationsAndAgents1795301086401 implements MigrationInterface {
  name = 'ConversationsAndAgents1795301086401';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "conversations" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "assistant_id" uuid NOT NULL, "user_id" character varying(256), "title" character varying(200) NOT NULL, "last_response_id" uuid, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_ee34f4f7ced4ec8681f26bf04ef" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_667884d7729e7edfd4603f4795" ON "conversations"  ("organization_id", "user_id", "updated_at") ',
    );
    await queryRunner.query(
      'CREATE TABLE "responses" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "assistant_id" uuid NOT NULL, "conversation_id" uuid NOT NULL, "previous_response_id" uuid, "user_id" character varying(256), "status" character varying(24) NOT NULL, "depth" integer NOT NULL, "active_agent" character varying(64), "instructions" text, "input" jsonb NOT NULL, "output" jsonb NOT NULL, "output_text" text NOT NULL, "transcript" jsonb NOT NULL, "usage" jsonb, "error" jsonb, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "completed_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_be3bdac59bd243dff421ad7bf70" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_164dc2401af36d65ac8fc6763e" ON "responses"  ("conversation_id", "created_at") ',
    );
    await queryRunner.query(
      'CREATE TABLE "messages" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "conversation_id" uuid NOT NULL, "response_id" uuid NOT NULL, "user_id" character varying(256), "role" character varying(16) NOT NULL, "content" text NOT NULL, "position" smallint NOT NULL DEFAULT \'0\', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_18325f38ae6de43878487eff986" PRIMARY KEY ("id"))',
    );
    await queryRunner.query('CREATE INDEX "IDX_17fbdbee18cb51511d3c6bf534" ON "messages"  ("response_id") ');
    await queryRunner.query(
      'CREATE INDEX "IDX_8584a1974e1ca95f4861d975ff" ON "messages"  ("conversation_id", "created_at") ',
    );
    await queryRunner.query(
      'CREATE TABLE "specialists" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "assistant_id" uuid NOT NULL, "name" character varying(48) NOT NULL, "role" text NOT NULL, "instructions" text NOT NULL DEFAULT \'\', "model" jsonb, "tool_names" text array NOT NULL DEFAULT \'{}\', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "UQ_783db256f0c1c088c4d175d1c31" UNIQUE ("assistant_id", "name"), CONSTRAINT "PK_4bd10b339bf051026c8b6543911" PRIMARY KEY ("id"))',
    );
    await queryRunner.query('ALTER TABLE "assistants" ADD "tool_names" text array NOT NULL DEFAULT \'{}\'');
    await queryRunner.query(
      'ALTER TABLE "conversations" ADD CONSTRAINT "FK_87d9df8c99fb824a39c681ec332" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await queryRunner.query(
      'ALTER TABLE "conversations" ADD CONSTRAINT "FK_33ef6d7d40a9ea6e03cbc9c02fa" FOREIGN KEY ("assistant_id") REFERENCES "assistants"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await queryRunner.query(
      'ALTER TABLE "responses" ADD CONSTRAINT "FK_5dabadc72f0058e33e384d72090" FOREIGN KEY ("conversation_id") REFERENCES "conversations"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await queryRunner.query(
      'ALTER TABLE "messages" ADD CONSTRAINT "FK_3bc55a7c3f9ed54b520bb5cfe23" FOREIGN KEY ("conversation_id") REFERENCES "conversations"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await queryRunner.query(
      'ALTER TABLE "messages" ADD CONSTRAINT "FK_17fbdbee18cb51511d3c6bf534a" FOREIGN KEY ("response_id") REFERENCES "responses"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await queryRunner.query(
      'ALTER TABLE "specialists" ADD CONSTRAINT "FK_40ee031ff69055516b44c43b347" FOREIGN KEY ("assistant_id") REFERENCES "assistants"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "specialists" DROP CONSTRAINT "FK_40ee031ff69055516b44c43b347"');
    await queryRunner.query('ALTER TABLE "messages" DROP CONSTRAINT "FK_17fbdbee18cb51511d3c6bf534a"');
    await queryRunner.query('ALTER TABLE "messages" DROP CONSTRAINT "FK_3bc55a7c3f9ed54b520bb5cfe23"');
    await queryRunner.query('ALTER TABLE "responses" DROP CONSTRAINT "FK_5dabadc72f0058e33e384d72090"');
    await queryRunner.query('ALTER TABLE "conversations" DROP CONSTRAINT "FK_33ef6d7d40a9ea6e03cbc9c02fa"');
    await queryRunner.query('ALTER TABLE "conversations" DROP CONSTRAINT "FK_87d9df8c99fb824a39c681ec332"');
    await queryRunner.query('ALTER TABLE "assistants" DROP COLUMN "tool_names"');
    await queryRunner.query('DROP TABLE "specialists"');
    await queryRunner.query('DROP INDEX "public"."IDX_8584a1974e1ca95f4861d975ff"');
    await queryRunner.query('DROP INDEX "public"."IDX_17fbdbee18cb51511d3c6bf534"');
    await queryRunner.query('DROP TABLE "messages"');
    await queryRunner.query('DROP INDEX "public"."IDX_164dc2401af36d65ac8fc6763e"');
    await queryRunner.query('DROP TABLE "responses"');
    await queryRunner.query('DROP INDEX "public"."IDX_667884d7729e7edfd4603f4795"');
    await queryRunner.query('DROP TABLE "conversations"');
  }
}
