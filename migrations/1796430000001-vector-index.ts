import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The embedding dimensions that get an HNSW index: the local embedder's (512) and the most
 * common hosted one's (1536). Chunks of any other dimension are still searched, by an exact
 * scan in the database, until a migration indexes theirs (docs/knowledge.md "Vector index").
 */
const INDEXED_DIMENSIONS = [512, 1536];
/** Chunks converted per statement by the backfill. */
const BACKFILL_BATCH = 500;

/**
 * An approximate-nearest-neighbour index for chunk embeddings, where the database has pgvector:
 * PostgreSQL with the `vector` extension installed (the pgvector/pgvector images), and the
 * embedded database, which loads PGlite's build of it. Where the extension is not available
 * (or this role may not create it) this migration changes nothing and search keeps its exact
 * scan; the service detects which at boot (VectorIndexProbe). The Float32 `embedding` column
 * stays the source of truth; `embedding_vector` is its pgvector copy, untyped so that stores of
 * different embedders share the table, indexed per dimension by a partial expression index.
 */
export class VectorIndex1796430000001 implements MigrationInterface {
  name = 'VectorIndex1796430000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    // Inside a block with its own exception handler, so a refusal (the extension is not trusted
    // and this role is no superuser) leaves the migration's transaction usable.
    await queryRunner.query(`DO $$
      BEGIN
        IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') THEN
          BEGIN
            CREATE EXTENSION IF NOT EXISTS vector;
          EXCEPTION WHEN insufficient_privilege THEN
            RAISE NOTICE 'pgvector is available but this role may not create it: search keeps its exact scan';
          END;
        END IF;
      END $$`);
    // Resolvable by its bare name (its schema is on the search path), as the search's SQL names it.
    const [usable] = (await queryRunner.query("SELECT to_regtype('vector') IS NOT NULL AS usable")) as {
      usable: boolean;
    }[];
    if (!usable.usable) return;
    await queryRunner.query(
      'ALTER TABLE "vector_store_chunks" ADD COLUMN IF NOT EXISTS "embedding_vector" vector',
    );
    await this.backfill(queryRunner);
    for (const dimensions of INDEXED_DIMENSIONS) {
      // Inner product: embeddings are unit-length, and the exact scan ranks by their dot product.
      await queryRunner.query(
        `CREATE INDEX IF NOT EXISTS "IDX_vector_store_chunks_hnsw_${dimensions}" ON "vector_store_chunks"
           USING hnsw (("embedding_vector"::vector(${dimensions})) vector_ip_ops)
           WHERE vector_dims("embedding_vector") = ${dimensions}`,
      );
    }
  }

  /** Copies the chunks already embedded into the new column, in batches, oldest id first. */
  private async backfill(queryRunner: QueryRunner): Promise<void> {
    let after = '00000000-0000-0000-0000-000000000000';
    for (;;) {
      const rows = (await queryRunner.query(
        'SELECT id, embedding FROM vector_store_chunks WHERE id > $1 AND embedding_vector IS NULL ORDER BY id LIMIT $2',
        [after, BACKFILL_BATCH],
      )) as { id: string; embedding: Buffer }[];
      if (rows.length === 0) return;
      const texts = rows.map((row) => {
        const floats = new Float32Array(
          row.embedding.buffer.slice(
            row.embedding.byteOffset,
            row.embedding.byteOffset + row.embedding.byteLength,
          ),
        );
        return `[${floats.join(',')}]`;
      });
      await queryRunner.query(
        `UPDATE vector_store_chunks c SET embedding_vector = v.embedding::vector
           FROM unnest($1::uuid[], $2::text[]) AS v(id, embedding) WHERE c.id = v.id`,
        [rows.map((row) => row.id), texts],
      );
      after = rows[rows.length - 1].id;
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // The extension stays: other schemas may use it, and dropping it needs more rights.
    await queryRunner.query('ALTER TABLE "vector_store_chunks" DROP COLUMN IF EXISTS "embedding_vector"');
  }
}
