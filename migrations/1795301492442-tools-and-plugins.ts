import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ToolsAndPlugins1795301492442 implements MigrationInterface {
  name = 'ToolsAndPlugins1795301492442';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "plugins" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "name" character varying(100) NOT NULL, "oauth" jsonb, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "UQ_cc865cd60c2c570e6423094c840" UNIQUE ("organization_id", "name"), CONSTRAINT "PK_bb3d17826b76295957a253ba73e" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE TABLE "tools" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "name" character varying(64) NOT NULL, "kind" character varying(16) NOT NULL, "description" text NOT NULL DEFAULT \'\', "plugin_id" uuid, "config" jsonb NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "UQ_55a3c3a1ae15ce04355b998961b" UNIQUE ("organization_id", "name"), CONSTRAINT "PK_e23d56734caad471277bad8bf85" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'ALTER TABLE "plugins" ADD CONSTRAINT "FK_9bd6522b64c4b238796b898e94a" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await queryRunner.query(
      'ALTER TABLE "tools" ADD CONSTRAINT "FK_ccb6a17c74c78e0a09c6e480aca" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
    await queryRunner.query(
      'ALTER TABLE "tools" ADD CONSTRAINT "FK_414ea60e46e783320faf23b63e9" FOREIGN KEY ("plugin_id") REFERENCES "plugins"("id") ON DELETE SET NULL ON UPDATE NO ACTION',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "tools" DROP CONSTRAINT "FK_414ea60e46e783320faf23b63e9"');
    await queryRunner.query('ALTER TABLE "tools" DROP CONSTRAINT "FK_ccb6a17c74c78e0a09c6e480aca"');
    await queryRunner.query('ALTER TABLE "plugins" DROP CONSTRAINT "FK_9bd6522b64c4b238796b898e94a"');
    await queryRunner.query('DROP TABLE "tools"');
    await queryRunner.query('DROP TABLE "plugins"');
  }
}
