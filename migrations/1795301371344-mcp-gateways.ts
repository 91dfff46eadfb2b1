import type { MigrationInterface, QueryRunner } from 'typeorm';

export class McpGateways1795301371344 implements MigrationInterface {
  name = 'McpGateways1795301371344';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE "mcp_gateways" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL, "name" character varying(63) NOT NULL, "tool_names" text array NOT NULL DEFAULT \'{}\', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "UQ_c3cd8e7b7e9ba77c4ae576a988a" UNIQUE ("name"), CONSTRAINT "PK_98907bc5483b3d2f60f1b10c1ce" PRIMARY KEY ("id"))',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_28f13c0b0d9b1fdba3b59b7ce2" ON "mcp_gateways"  ("organization_id") ',
    );
    await queryRunner.query(
      'ALTER TABLE "mcp_gateways" ADD CONSTRAINT "FK_28f13c0b0d9b1fdba3b59b7ce2b" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE NO ACTION',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "mcp_gateways" DROP CONSTRAINT "FK_28f13c0b0d9b1fdba3b59b7ce2b"');
    await queryRunner.query('DROP INDEX "public"."IDX_28f13c0b0d9b1fdba3b59b7ce2"');
    await queryRunner.query('DROP TABLE "mcp_gateways"');
  }
}
