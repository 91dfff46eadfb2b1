import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An organization's embedder (docs/knowledge.md, "Embeddings"): an OpenAI-compatible
 * `/v1/embeddings` endpoint, set by the platform; null keeps the local embedder.
 */
export class OrganizationEmbeddings1796420000002 implements MigrationInterface {
  name = 'OrganizationEmbeddings1796420000002';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "organizations" ADD "embeddings" jsonb');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE "organizations" DROP COLUMN "embeddings"');
  }
}
