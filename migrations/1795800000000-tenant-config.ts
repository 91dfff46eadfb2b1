import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the platform grants an organization (environment secrets its admin may reference, hosts
 * its configuration may reach despite the SSRF guard), and who last wrote each model or tool
 * configuration: rows written before this migration count as the platform's.
 */
export class TenantConfig1795800000000 implements MigrationInterface {
  name = 'TenantConfig1795800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE "organizations" ADD "secret_env_grants" text array NOT NULL DEFAULT '{}'`,
    );
    await queryRunner.query(
      `ALTER TABLE "organizations" ADD "ssrf_allowlist" text array NOT NULL DEFAULT '{}'`,
    );
    for (const table of ['assistants', 'specialists', 'tools']) {
      await queryRunner.query(
        `ALTER TABLE "${table}" ADD "configured_by" character varying(16) NOT NULL DEFAULT 'platform'`,
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['assistants', 'specialists', 'tools']) {
      await queryRunner.query(`ALTER TABLE "${table}" DROP COLUMN "configured_by"`);
    }
    await queryRunner.query('ALTER TABLE "organizations" DROP COLUMN "ssrf_allowlist"');
    await queryRunner.query('ALTER TABLE "organizations" DROP COLUMN "secret_env_grants"');
  }
}
