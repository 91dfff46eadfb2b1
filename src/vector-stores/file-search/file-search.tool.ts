import { Injectable, Logger } from '@nestjs/common';
import { describeUnexpected } from '../../common/errors/all-exceptions.filter.js';
import { ApiError } from '../../common/errors/error-catalogue.js';
import { takeOneTool } from '../../common/request-schema/request-field.js';
import type { FileSearchCallResult, ServerTool, ToolResult } from '../../tools/server-tool.js';
import { absent, isObject, parseVectorStoreId, refuse, toVectorStoreId } from '../dto/vector-store-params.js';
import {
  parseSearchOptions,
  VectorStoreSearchService,
  type SearchOptions,
} from '../search/vector-store-search.service.js';
import { VectorStoresRepository } from '../vector-stores.repository.js';

/** `tools: [{type: "file_search", …}]` of POST /v1/responses, parsed. */
export interface FileSearchRequest {
  vectorStoreIds: string[];
  options: Omit<SearchOptions, 'queries'>;
  /** The tool as the Response echoes it. */
  echo: Record<string, unknown>;
}

const KNOWN = ['type', 'vector_store_ids', 'max_num_results', 'filters', 'ranking_options'];
const MAX_STORES = 10;

/** Parses one `file_search` tool of a request; every refusal names its field. */
export function parseFileSearchTool(raw: Record<string, unknown>, path: string): FileSearchRequest {
  for (const key of Object.keys(raw)) if (!KNOWN.includes(key)) refuse(`Unknown parameter: ${path}.${key}`);
  const ids = raw.vector_store_ids;
  if (
    !Array.isArray(ids) ||
    ids.length === 0 ||
    ids.length > MAX_STORES ||
    !ids.every((id) => typeof id === 'string')
  ) {
    throw new ApiError(
      'missing_required_field',
      `${path}.vector_store_ids must hold 1 to ${MAX_STORES} vector store ids`,
    );
  }
  const vectorStoreIds = ids.map((id) => {
    const parsed = parseVectorStoreId(id);
    if (parsed === null)
      throw new ApiError('vector_store_not_found', `${path}.vector_store_ids: no vector store ${id}`);
    return parsed;
  });
  const { queries: _queries, ...options } = parseSearchOptions({ ...raw, query: 'x' }, `${path}.`);
  // Echoed whole, defaults filled in, as OpenAI does and as Open Responses' FileSearchTool requires.
  const ranking = isObject(raw.ranking_options) ? raw.ranking_options : {};
  const echo: Record<string, unknown> = {
    type: 'file_search',
    vector_store_ids: ids,
    max_num_results: options.maxNumResults,
    ranking_options: {
      ranker: absent(ranking.ranker) ? 'auto' : ranking.ranker,
      score_threshold: options.scoreThreshold,
      hybrid_search: { embedding_weight: options.weights.embedding, text_weight: options.weights.text },
    },
    filters: absent(raw.filters) ? null : raw.filters,
  };
  return { vectorStoreIds, options, echo };
}

/** Pulls the `file_search` tool (at most one) out of a request's `tools`; the rest are returned as they were. */
export function splitFileSearchTool(tools: unknown): { fileSearch: FileSearchRequest | null; rest: unknown } {
  const { taken, rest } = takeOneTool(
    tools,
    (type) => type === 'file_search',
    parseFileSearchTool,
    'a request takes one file_search tool (list every store in it)',
  );
  return { fileSearch: taken, rest };
}

/**
 * The `file_search` tool of Responses as a server tool (docs/knowledge.md): the model calls it
 * with a query, the service searches the request's vector stores (hybrid search, bounded by the
 * caller's organization) and feeds the model the best chunks. A failed search is a failed call,
 * which the model reads; the turn goes on.
 */
@Injectable()
export class FileSearchTools {
  private readonly logger = new Logger('FileSearch');

  constructor(
    private readonly stores: VectorStoresRepository,
    private readonly search: VectorStoreSearchService,
  ) {}

  /** Before the turn: each store must be the organization's (404 otherwise, as everywhere). */
  async check(organizationId: string, request: FileSearchRequest): Promise<void> {
    const found = await this.stores.findMany(organizationId, request.vectorStoreIds);
    if (found.length !== new Set(request.vectorStoreIds).size) {
      throw new ApiError(
        'vector_store_not_found',
        'tools: a file_search vector_store_ids names no vector store of this organization',
      );
    }
  }

  tool(request: FileSearchRequest, includeResults: boolean): ServerTool {
    return {
      kind: 'file_search',
      definition: {
        name: 'file_search',
        description:
          "Search the organization's documents. Returns the passages that best match the query, each with its file name; cite the files you use.",
        parameters: {
          type: 'object',
          properties: { query: { type: 'string', description: 'What to look for, in a few words' } },
          required: ['query'],
        },
      },
      execute: async (args, context): Promise<ToolResult> => {
        const query = typeof args.query === 'string' ? args.query.trim() : '';
        if (!query) return { ok: false, error: 'The "query" argument must be a non-empty string' };
        try {
          const { results, vectorStoreIds } = await this.search.search(
            {
              organizationId: context.organizationId,
              assistantId: context.assistantId,
              userId: context.userId,
            },
            request.vectorStoreIds,
            { ...request.options, queries: [query] },
          );
          const hits: FileSearchCallResult[] = results.map((result, index) => ({
            file_id: result.file_id,
            filename: result.filename,
            score: result.score,
            text: result.content.map((part) => part.text).join('\n'),
            attributes: result.attributes,
            vector_store_id: toVectorStoreId(vectorStoreIds[index]),
          }));
          return {
            ok: true,
            output: JSON.stringify({
              query,
              results: hits.map(({ attributes: _a, vector_store_id: _v, ...hit }) => hit),
            }),
            fileSearch: {
              queries: [query],
              results: includeResults ? hits : null,
              passages: hits.map(({ file_id, filename, text }) => ({ file_id, filename, text })),
            },
          };
        } catch (error) {
          if (!(error instanceof ApiError))
            this.logger.warn({ ...describeUnexpected(error), msg: 'file search failed' });
          return { ok: false, error: 'The file search failed; answer without it, or try again' };
        }
      },
    };
  }
}
