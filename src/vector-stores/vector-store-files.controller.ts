import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Post, Query } from '@nestjs/common';
import type { ApiKeyPrincipal } from '../api-keys/api-keys.service.js';
import { Principal, RequireScopes } from '../auth/auth.decorators.js';
import { VectorStoreFilesService } from './vector-store-files.service.js';
import type { BatchView, VectorStoreFileView } from './vector-store-views.js';
import { callerOf, type RequestHeaders } from './vector-stores.controller.js';

/** The files of a vector store and its file batches (docs/knowledge.md). */
@Controller('v1/vector_stores/:vectorStoreId')
@RequireScopes('user')
export class VectorStoreFilesController {
  constructor(private readonly files: VectorStoreFilesService) {}

  @Post('files')
  attach(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Param('vectorStoreId') storeId: string,
    @Body() body: unknown,
  ): Promise<VectorStoreFileView> {
    return this.files.attach(callerOf(principal, headers), storeId, body);
  }

  @Get('files')
  list(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Param('vectorStoreId') storeId: string,
    @Query() query: Record<string, unknown>,
  ) {
    return this.files.list(callerOf(principal, headers), storeId, query);
  }

  @Get('files/:fileId')
  retrieve(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Param('vectorStoreId') storeId: string,
    @Param('fileId') fileId: string,
  ): Promise<VectorStoreFileView> {
    return this.files.get(callerOf(principal, headers), storeId, fileId);
  }

  @Post('files/:fileId')
  @HttpCode(200)
  update(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Param('vectorStoreId') storeId: string,
    @Param('fileId') fileId: string,
    @Body() body: unknown,
  ): Promise<VectorStoreFileView> {
    return this.files.updateAttributes(callerOf(principal, headers), storeId, fileId, body);
  }

  @Delete('files/:fileId')
  delete(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Param('vectorStoreId') storeId: string,
    @Param('fileId') fileId: string,
  ) {
    return this.files.delete(callerOf(principal, headers), storeId, fileId);
  }

  @Post('file_batches')
  createBatch(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Param('vectorStoreId') storeId: string,
    @Body() body: unknown,
  ): Promise<BatchView> {
    return this.files.createBatch(callerOf(principal, headers), storeId, body);
  }

  @Get('file_batches/:batchId')
  retrieveBatch(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Param('vectorStoreId') storeId: string,
    @Param('batchId') batchId: string,
  ): Promise<BatchView> {
    return this.files.getBatch(callerOf(principal, headers), storeId, batchId);
  }

  @Post('file_batches/:batchId/cancel')
  @HttpCode(200)
  cancelBatch(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Param('vectorStoreId') storeId: string,
    @Param('batchId') batchId: string,
  ): Promise<BatchView> {
    return this.files.cancelBatch(callerOf(principal, headers), storeId, batchId);
  }

  @Get('file_batches/:batchId/files')
  listBatchFiles(
    @Principal() principal: ApiKeyPrincipal,
    @Headers() headers: RequestHeaders,
    @Param('vectorStoreId') storeId: string,
    @Param('batchId') batchId: string,
    @Query() query: Record<string, unknown>,
  ) {
    return this.files.list(callerOf(principal, headers), storeId, query, batchId);
  }
}
