import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Post, Query } from '@nestjs/common';
import type { ApiKeyPrincipal } from '../api-keys/api-keys.service.js';
import { Principal, RequireScopes } from '../auth/auth.decorators.js';
import { optionalUserId } from '../common/http/request-params.js';
import type { FileCaller } from '../files/files.service.js';
import { bodyOf } from './dto/vector-store-params.js';
import {
  parseSearchOptions,
  VectorStoreSearchService,
  type SearchResult,
} from './search/vector-store-search.service.js';
import type { ListView, VectorStoreView } from './vector-store-views.js';
import { VectorStoresService } from './vector-stores.service.js';

export type RequestHeaders = Record<string, string | string[] | undefined>;

export function callerOf(principal: ApiKeyPrincipal, headers: RequestHeaders): FileCaller {
  return { organizationId: principal.organizationId, userId: optionalUserId(headers) };
}

/**
 * OpenAI's Vector Stores API (docs/knowledge.md), as the official SDKs call it. Like files,
 * it needs a `user` (or `full_access`) key; stores are the organization's.
 */
@Controller('v1/vector_stores')
@RequireScopes('user')
export class VectorStoresController {
  constructor(
    private readonly stores: VectorStoresService,
    private readonly searches: VectorStoreSearchService,
  ) {}

  @Post()
  create(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Body() body: unknown,
  ): Promise<VectorStoreView> {
    return this.stores.create(callerOf(principal, headers), body);
  }

  @Get()
  list(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Query() query: Record<string, unknown>,
  ): Promise<ListView<VectorStoreView>> {
    return this.stores.list(callerOf(principal, headers), query);
  }

  @Get(':vectorStoreId')
  retrieve(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Param('vectorStoreId') id: string,
  ): Promise<VectorStoreView> {
    return this.stores.get(callerOf(principal, headers), id);
  }

  @Post(':vectorStoreId')
  @HttpCode(200)
  update(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Param('vectorStoreId') id: string,
    @Body() body: unknown,
  ): Promise<VectorStoreView> {
    return this.stores.update(callerOf(principal, headers), id, body);
  }

  @Delete(':vectorStoreId')
  delete(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Param('vectorStoreId') id: string,
  ) {
    return this.stores.delete(callerOf(principal, headers), id);
  }

  /** `vector_store.search_results.page`: the best chunks, best first (no further page). */
  @Post(':vectorStoreId/search')
  @HttpCode(200)
  async search(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Param('vectorStoreId') id: string,
    @Body() raw: unknown,
  ): Promise<{
    object: 'vector_store.search_results.page';
    search_query: string[];
    data: SearchResult[];
    has_more: false;
    next_page: null;
  }> {
    const caller = callerOf(principal, headers);
    const store = await this.stores.resolve(caller, id);
    const body = bodyOf(raw, ['query', 'max_num_results', 'filters', 'ranking_options', 'rewrite_query']);
    const { searchQuery, results } = await this.searches.search(
      { ...caller, apiKeyId: principal.keyId },
      [store.id],
      parseSearchOptions(body),
    );
    return {
      object: 'vector_store.search_results.page',
      search_query: searchQuery,
      data: results,
      has_more: false,
      next_page: null,
    };
  }
}
