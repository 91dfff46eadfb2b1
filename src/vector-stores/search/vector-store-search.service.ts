import { Injectable } from '@nestjs/common';
import { ApiError } from '../../common/errors/error-catalogue.js';
import { toFileId } from '../../files/dto/files.dto.js';
import { absent, isObject, refuse, toVectorStoreId } from '../dto/vector-store-params.js';
import { EmbeddingError, EmbeddingsService, type EmbeddingCaller } from '../embeddings/embeddings.service.js';
import { contentWords } from '../embeddings/local-embedder.js';
import { isExpired } from '../vector-store-views.js';
import { VectorStoresRepository } from '../vector-stores.repository.js';
import { parseAttributeFilter, type AttributeFilter, type AttributeValue } from './attribute-filter.js';
import { ChunkSearchRepository } from './chunk-search.repository.js';
import { fuseRankings, type HybridWeights } from './hybrid-ranking.js';

export interface SearchOptions {
  queries: string[];
  maxNumResults: number;
  filter: AttributeFilter | null;
  scoreThreshold: number;
  weights: HybridWeights;
  rewriteQuery: boolean;
}

export interface SearchResult {
  file_id: string;
  filename: string;
  score: number;
  attributes: Record<string, AttributeValue>;
  content: Array<{ type: 'text'; text: string }>;
}

/** Chunks read from each ranking before fusion: enough for the fusion to reorder the top. */
const CANDIDATES = 100;

/** Parses a search's options (the Search API's body, the file_search tool's parameters). */
export function parseSearchOptions(body: Record<string, unknown>, path = ''): SearchOptions {
  const at = (key: string) => `${path}${key}`;
  const raw = body.query;
  const queries = typeof raw === 'string' ? [raw] : raw;
  if (
    !Array.isArray(queries) ||
    queries.length === 0 ||
    queries.length > 10 ||
    !queries.every((q) => typeof q === 'string' && q.trim() !== '' && q.length <= 4096)
  ) {
    throw new ApiError(
      'missing_required_field',
      `${at('query')} must be a non-empty string (or up to 10 of them), of at most 4096 characters`,
    );
  }
  let maxNumResults = 10;
  if (!absent(body.max_num_results)) {
    const value = body.max_num_results;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 50)
      refuse(`${at('max_num_results')} must be an integer from 1 to 50`);
    maxNumResults = value;
  }
  const filter = absent(body.filters) ? null : parseAttributeFilter(body.filters, at('filters'));
  let scoreThreshold = 0;
  const weights: HybridWeights = { embedding: 1, text: 1 };
  if (!absent(body.ranking_options)) {
    const ranking = body.ranking_options;
    const where = at('ranking_options');
    if (!isObject(ranking)) refuse(`${where} must be an object`);
    for (const key of Object.keys(ranking)) {
      if (!['ranker', 'score_threshold', 'hybrid_search'].includes(key))
        refuse(`Unknown parameter: ${where}.${key}`);
    }
    if (
      !absent(ranking.ranker) &&
      !['auto', 'none', 'default-2024-11-15'].includes(ranking.ranker as string)
    ) {
      refuse(`${where}.ranker must be "auto", "none" or "default-2024-11-15"`);
    }
    if (!absent(ranking.score_threshold)) {
      const value = ranking.score_threshold;
      if (typeof value !== 'number' || value < 0 || value > 1)
        refuse(`${where}.score_threshold must be a number from 0 to 1`);
      scoreThreshold = value;
    }
    if (!absent(ranking.hybrid_search)) {
      const hybrid = ranking.hybrid_search;
      if (!isObject(hybrid)) refuse(`${where}.hybrid_search must be an object`);
      for (const [key, name] of [
        ['embedding_weight', 'embedding'],
        ['text_weight', 'text'],
      ] as const) {
        const value = hybrid[key];
        if (absent(value)) continue;
        if (typeof value !== 'number' || value < 0 || value > 1)
          refuse(`${where}.hybrid_search.${key} must be a number from 0 to 1`);
        weights[name] = value;
      }
      for (const key of Object.keys(hybrid)) {
        if (key !== 'embedding_weight' && key !== 'text_weight')
          refuse(`Unknown parameter: ${where}.hybrid_search.${key}`);
      }
      if (weights.embedding + weights.text === 0)
        refuse(`${where}.hybrid_search: the two weights cannot both be 0`);
    }
  }
  if (!absent(body.rewrite_query) && typeof body.rewrite_query !== 'boolean')
    refuse(`${at('rewrite_query')} must be true or false`);
  return {
    queries: queries as string[],
    maxNumResults,
    filter,
    scoreThreshold,
    weights,
    rewriteQuery: body.rewrite_query === true,
  };
}

/**
 * Hybrid search over vector stores (docs/knowledge.md "Search"): the vector ranking (local
 * embeddings; HNSW index or exact scan, docs/knowledge.md "Vector index") and the full-text ranking fused by reciprocal rank; several queries
 * are searched as one text. Every query of it is bounded by the caller's organization.
 */
@Injectable()
export class VectorStoreSearchService {
  constructor(
    private readonly stores: VectorStoresRepository,
    private readonly chunks: ChunkSearchRepository,
    private readonly embeddings: EmbeddingsService,
  ) {}

  /**
   * The stores (bare ids) must be the organization's (`caller.organizationId`) and not expired;
   * else 404 / 400. The query's embedding is recorded as the caller's usage.
   */
  async search(
    caller: EmbeddingCaller,
    storeIds: string[],
    options: SearchOptions,
  ): Promise<{ searchQuery: string[]; results: SearchResult[]; vectorStoreIds: string[] }> {
    const { organizationId } = caller;
    const stores = await this.stores.findMany(organizationId, storeIds);
    if (stores.length !== new Set(storeIds).size)
      throw new ApiError('vector_store_not_found', 'No vector store with this id');
    const expired = stores.find((store) => isExpired(store));
    if (expired) refuse(`The vector store ${toVectorStoreId(expired.id)} has expired`);
    const searchQuery = options.rewriteQuery
      ? options.queries.map((q) => contentWords(q).join(' ') || q)
      : options.queries;
    const text = searchQuery.join('\n');
    const byEmbedder = new Map<string, string[]>();
    for (const store of stores)
      byEmbedder.set(store.embedder, [...(byEmbedder.get(store.embedder) ?? []), store.id]);
    const vectorRanking: string[] = [];
    for (const [embedder, ids] of byEmbedder) {
      let query: Float32Array;
      try {
        [query] = await this.embeddings.embed(caller, embedder, [text]);
      } catch (error) {
        // Stores whose embedder cannot answer (no longer the organization's, endpoint down) are
        // searched by their words only: never with another model's vectors.
        if (error instanceof EmbeddingError) continue;
        throw error;
      }
      vectorRanking.push(
        ...(await this.chunks.nearest(organizationId, ids, options.filter, query, CANDIDATES)),
      );
    }
    const lexicalRanking = await this.chunks.lexical(
      organizationId,
      storeIds,
      options.filter,
      text,
      CANDIDATES,
    );
    const fused = fuseRankings(vectorRanking, lexicalRanking, options.weights)
      .filter((hit) => hit.score >= options.scoreThreshold)
      .slice(0, options.maxNumResults);
    const found = await this.chunks.chunks(
      organizationId,
      fused.map((hit) => hit.id),
    );
    await this.stores.touch(organizationId, storeIds);
    const hits = fused.flatMap((hit) => {
      const chunk = found.get(hit.id);
      return chunk === undefined ? [] : [{ hit, chunk }];
    });
    const results = hits.map(({ hit, chunk }): SearchResult => ({
      file_id: toFileId(chunk.fileId),
      filename: chunk.filename,
      score: Math.round(hit.score * 1e6) / 1e6,
      attributes: chunk.attributes,
      content: [{ type: 'text', text: chunk.text }],
    }));
    // Which store each result came from (bare ids): the file_search tool shows it, the Search API does not.
    return { searchQuery, results, vectorStoreIds: hits.map(({ chunk }) => chunk.vectorStoreId) };
  }
}
