import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The upstream targets each turn's model calls tried, and which one answered (docs/resilience.md). */
export class UpstreamAttempts1796200000001 implements MigrationInterface {
  name = 'UpstreamAttempts1796200000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "responses" ADD "upstream_attempts" jsonb');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "responses" DROP COLUMN "upstream_attempts"');
  }
}
