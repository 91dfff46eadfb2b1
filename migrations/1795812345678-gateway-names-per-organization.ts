import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * MCP gateway names are unique per organization instead of globally: one tenant can no longer
 * learn another's gateway names from "already taken", nor take a name first to squat it. The
 * request path still carries only the name; the caller's token picks its organization's gateway
 * (an index on the name serves that lookup).
 */
export class GatewayNamesPerOrganization1795812345678 implements MigrationInterface {
  name = 'GatewayNamesPerOrganization1795812345678';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "mcp_gateways" DROP CONSTRAINT "UQ_c3cd8e7b7e9ba77c4ae576a988a"');
    await queryRunner.query(
      'ALTER TABLE "mcp_gateways" ADD CONSTRAINT "UQ_mcp_gateways_organization_name" UNIQUE ("organization_id", "name")',
    );
    await queryRunner.query('CREATE INDEX "IDX_mcp_gateways_name" ON "mcp_gateways" ("name")');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Fails if two organizations now share a name: rename one of them first.
    await queryRunner.query('DROP INDEX "IDX_mcp_gateways_name"');
    await queryRunner.query('ALTER TABLE "mcp_gateways" DROP CONSTRAINT "UQ_mcp_gateways_organization_name"');
    await queryRunner.query(
      'ALTER TABLE "mcp_gateways" ADD CONSTRAINT "UQ_c3cd8e7b7e9ba77c4ae576a988a" UNIQUE ("name")',
    );
  }
}
