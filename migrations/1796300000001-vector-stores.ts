import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Vector stores (docs/knowledge.md): the stores, the files attached to them (which are also the
 * ingestion jobs, claimed with a lease), file batches, and the chunks with their embeddings
 * (Float32 bytes, compared by an exact scan) and their full-text vector (GIN-indexed). Every
 * row carries its organization, and goes with it.
 */
export class VectorStores1796300000001 implements MigrationInterface {
  name = 'VectorStores1796300000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "vector_stores" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE,
        "name" character varying(256) NOT NULL, "description" character varying(512), "metadata" jsonb NOT NULL,
        "expires_after_days" integer, "embedder" character varying(128) NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "last_active_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "PK_vector_stores" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_vector_stores_organization_recent" ON "vector_stores" ("organization_id", "created_at", "id")',
    );
    await queryRunner.query(
      `CREATE TABLE "vector_store_file_batches" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE,
        "vector_store_id" uuid NOT NULL REFERENCES "vector_stores"("id") ON DELETE CASCADE,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_vector_store_file_batches" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "vector_store_files" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE,
        "vector_store_id" uuid NOT NULL REFERENCES "vector_stores"("id") ON DELETE CASCADE,
        "file_id" uuid NOT NULL REFERENCES "files"("id") ON DELETE CASCADE,
        "batch_id" uuid REFERENCES "vector_store_file_batches"("id") ON DELETE SET NULL,
        "status" character varying(16) NOT NULL, "last_error" jsonb, "attributes" jsonb NOT NULL,
        "chunk_size" integer NOT NULL, "chunk_overlap" integer NOT NULL, "usage_bytes" bigint NOT NULL DEFAULT 0,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "lease_until" TIMESTAMP WITH TIME ZONE, "attempts" integer NOT NULL DEFAULT 0,
        CONSTRAINT "PK_vector_store_files" PRIMARY KEY ("id"), CONSTRAINT "UQ_vector_store_files_file" UNIQUE ("vector_store_id", "file_id"))`,
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_vector_store_files_store_recent" ON "vector_store_files" ("organization_id", "vector_store_id", "created_at", "id")',
    );
    // The ingestion queue: only the files still waiting are in this index.
    await queryRunner.query(
      `CREATE INDEX "IDX_vector_store_files_pending" ON "vector_store_files" ("created_at") WHERE "status" = 'in_progress'`,
    );
    await queryRunner.query(
      `CREATE TABLE "vector_store_chunks" ("id" uuid NOT NULL, "organization_id" uuid NOT NULL REFERENCES "organizations"("id") ON DELETE CASCADE,
        "vector_store_id" uuid NOT NULL, "vector_store_file_id" uuid NOT NULL REFERENCES "vector_store_files"("id") ON DELETE CASCADE,
        "position" integer NOT NULL, "text" text NOT NULL, "embedding" bytea NOT NULL,
        "search_text" tsvector GENERATED ALWAYS AS (to_tsvector('english', "text")) STORED,
        CONSTRAINT "PK_vector_store_chunks" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_vector_store_chunks_store" ON "vector_store_chunks" ("organization_id", "vector_store_id")',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_vector_store_chunks_file" ON "vector_store_chunks" ("vector_store_file_id", "position")',
    );
    await queryRunner.query(
      'CREATE INDEX "IDX_vector_store_chunks_search_text" ON "vector_store_chunks" USING GIN ("search_text")',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE "vector_store_chunks"');
    await queryRunner.query('DROP TABLE "vector_store_files"');
    await queryRunner.query('DROP TABLE "vector_store_file_batches"');
    await queryRunner.query('DROP TABLE "vector_stores"');
  }
}
