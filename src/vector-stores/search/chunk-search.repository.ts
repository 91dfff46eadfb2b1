import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { filterToSql, type AttributeFilter, type AttributeValue } from './attribute-filter.js';
import { toVectorLiteral, VectorIndexProbe } from '../vector-index/vector-index.probe.js';

export interface ChunkHit {
  chunkId: string;
  vectorStoreId: string;
  fileId: string;
  filename: string;
  text: string;
  attributes: Record<string, AttributeValue>;
}

/** A vector search: the organization's stores, the attribute filter, the query's embedding. */
export interface NearestQuery {
  organizationId: string;
  storeIds: string[];
  filter: AttributeFilter | null;
  query: Float32Array;
  limit: number;
}

/**
 * The searchable chunks of the given stores: of the organization, of completed files, matching
 * the attribute filter. `$1` is the organization, `$2` the stores; the filter's values follow.
 */
function scope(organizationId: string, storeIds: string[], filter: AttributeFilter | null) {
  const params: unknown[] = [organizationId, storeIds];
  const condition = filter === null ? 'TRUE' : filterToSql(filter, 'f.attributes', params);
  const from = `vector_store_chunks c
    JOIN vector_store_files f ON f.organization_id = $1 AND f.id = c.vector_store_file_id AND f.status = 'completed'
   WHERE c.organization_id = $1 AND c.vector_store_id = ANY($2::uuid[]) AND ${condition}`;
  return { params, from };
}

/**
 * The two searches over chunks, both bounded by the organization in their SQL. Vector search
 * uses pgvector's HNSW index where the database has it, else an exact scan (docs/knowledge.md
 * "Vector index"); both rank by the dot product of unit-length embeddings, keep only positive
 * ones, and break ties by chunk id. Full-text search uses the GIN index of `search_text`.
 */
@Injectable()
export class ChunkSearchRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly vectorIndex: VectorIndexProbe,
  ) {}

  /** The ids of the `limit` chunks nearest the (unit-length) query embedding, nearest first. */
  async nearest(
    organizationId: string,
    storeIds: string[],
    filter: AttributeFilter | null,
    query: Float32Array,
    limit: number,
  ): Promise<string[]> {
    const wanted = { organizationId, storeIds, filter, query, limit };
    return (await this.vectorIndex.detect()) === 'hnsw'
      ? this.nearestIndexed(wanted)
      : this.nearestExact(wanted);
  }

  /**
   * Nearest by pgvector. The dimension is written into the SQL (an integer, the query's own
   * length) because the planner matches the partial HNSW index of that dimension only by its
   * literal expression; a dimension with no index is ordered exactly by the database. The
   * iterative scan goes on past `ef_search` candidates when filters (organization, stores,
   * completed files, attributes) drop some, and keeps the order exact (strict_order); the outer
   * ORDER BY adds the exact scan's tie-break by id.
   */
  async nearestIndexed({ organizationId, storeIds, filter, query, limit }: NearestQuery): Promise<string[]> {
    const dimensions = query.length;
    const { params, from } = scope(organizationId, storeIds, filter);
    params.push(toVectorLiteral(query), limit);
    const distance = `c.embedding_vector::vector(${dimensions}) <#> $${params.length - 1}::vector(${dimensions})`;
    return this.dataSource.transaction(async (manager) => {
      await manager.query(`SET LOCAL hnsw.ef_search = ${Math.min(Math.max(limit, 40), 1000)}`);
      await manager.query(`SET LOCAL hnsw.iterative_scan = strict_order`);
      const rows = await manager.query<{ id: string }[]>(
        `SELECT id FROM (
           SELECT c.id, ${distance} AS distance FROM ${from} AND vector_dims(c.embedding_vector) = ${dimensions}
            ORDER BY ${distance} LIMIT $${params.length}::integer) nearest
          WHERE distance < 0 ORDER BY distance, id`,
        params,
      );
      return rows.map((row) => row.id);
    });
  }

  /** Nearest by reading every candidate's embedding and comparing it here. */
  async nearestExact({ organizationId, storeIds, filter, query, limit }: NearestQuery): Promise<string[]> {
    const { params, from } = scope(organizationId, storeIds, filter);
    const rows = await this.dataSource.query<{ id: string; embedding: Buffer }[]>(
      `SELECT c.id, c.embedding FROM ${from}`,
      params,
    );
    const scored: Array<{ id: string; score: number }> = [];
    for (const row of rows) {
      const vector = new Float32Array(
        row.embedding.buffer.slice(
          row.embedding.byteOffset,
          row.embedding.byteOffset + row.embedding.byteLength,
        ),
      );
      if (vector.length !== query.length) continue; // embedded by another embedder: not comparable
      let dot = 0;
      for (let i = 0; i < vector.length; i++) dot += vector[i] * query[i];
      if (dot > 0) scored.push({ id: row.id, score: dot });
    }
    scored.sort((a, b) => b.score - a.score || a.id.localeCompare(b.id));
    return scored.slice(0, limit).map((hit) => hit.id);
  }

  /**
   * The ids of the `limit` chunks best matching the query's words by full-text search (any of
   * its words, English stemming; ranked by cover density), best first.
   */
  async lexical(
    organizationId: string,
    storeIds: string[],
    filter: AttributeFilter | null,
    query: string,
    limit: number,
  ): Promise<string[]> {
    const { params, from } = scope(organizationId, storeIds, filter);
    params.push(query, limit);
    const text = `$${params.length - 1}::text`;
    // Any of the query's lexemes (OR), each quoted: the query's text never becomes tsquery syntax.
    const tsquery = `(SELECT string_agg(quote_literal(lexeme), ' | ')
                        FROM unnest(tsvector_to_array(to_tsvector('english', ${text}))) AS lexeme)::tsquery`;
    const rows = await this.dataSource.query<{ id: string }[]>(
      `WITH q AS (SELECT ${tsquery} AS query)
       SELECT c.id FROM q, ${from} AND q.query IS NOT NULL AND c.search_text @@ q.query
        ORDER BY ts_rank_cd(c.search_text, q.query) DESC, c.id
        LIMIT $${params.length}::integer`,
      params,
    );
    return rows.map((row) => row.id);
  }

  /** The chunks with these ids, with their file's name and attributes (of the organization only). */
  async chunks(organizationId: string, ids: string[]): Promise<Map<string, ChunkHit>> {
    const rows = await this.dataSource.query<
      {
        id: string;
        vector_store_id: string;
        file_id: string;
        filename: string;
        text: string;
        attributes: Record<string, AttributeValue>;
      }[]
    >(
      `SELECT c.id, c.vector_store_id, f.file_id, files.filename, c.text, f.attributes
         FROM vector_store_chunks c
         JOIN vector_store_files f ON f.organization_id = $1 AND f.id = c.vector_store_file_id
         JOIN files ON files.organization_id = $1 AND files.id = f.file_id
        WHERE c.organization_id = $1 AND c.id = ANY($2::uuid[])`,
      [organizationId, ids],
    );
    return new Map(
      rows.map((row) => [
        row.id,
        {
          chunkId: row.id,
          vectorStoreId: row.vector_store_id,
          fileId: row.file_id,
          filename: row.filename,
          text: row.text,
          attributes: row.attributes,
        },
      ]),
    );
  }
}
