import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource, type EntityManager } from 'typeorm';
import { ApiError } from '../common/errors/error-catalogue.js';
import { assertUnderQuota } from '../common/errors/quota.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { USER_SCOPED_PURPOSE } from '../files/file-purposes.js';
import { FilesRepository } from '../files/files.repository.js';
import type { FileCaller } from '../files/files.service.js';
import {
  absent,
  bodyOf,
  fileIdOf,
  optionalString,
  parseChunkingStrategy,
  parseExpiresAfter,
  parseListQuery,
  parseMetadata,
  parseVectorStoreId,
  refuse,
} from './dto/vector-store-params.js';
import { EmbeddingsService } from './embeddings/embeddings.service.js';
import type { ChunkingStrategy } from './ingestion/chunking.js';
import { IngestionWorker } from './ingestion/ingestion.worker.js';
import type { AttributeValue } from './search/attribute-filter.js';
import { VectorStoreFilesRepository } from './vector-store-files.repository.js';
import { listView, vectorStoreView, type ListView, type VectorStoreView } from './vector-store-views.js';
import { VectorStoresRepository, type VectorStoreRecord } from './vector-stores.repository.js';

export interface FileToAttach {
  fileId: string | null;
  path: string;
  attributes: Record<string, AttributeValue>;
  chunking: ChunkingStrategy;
}

export const storeNotFound = (): ApiError =>
  new ApiError('vector_store_not_found', 'No vector store with this id');

/**
 * Vector stores (docs/knowledge.md): organization-wide, each query bounded by the caller's
 * organization. Attaching files queues their ingestion (IngestionWorker).
 */
@Injectable()
export class VectorStoresService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly stores: VectorStoresRepository,
    private readonly storeFiles: VectorStoreFilesRepository,
    private readonly files: FilesRepository,
    private readonly embeddings: EmbeddingsService,
    private readonly worker: IngestionWorker,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(caller: FileCaller, raw: unknown): Promise<VectorStoreView> {
    const body = bodyOf(raw, [
      'name',
      'description',
      'expires_after',
      'metadata',
      'file_ids',
      'chunking_strategy',
    ]);
    const chunking = parseChunkingStrategy(body.chunking_strategy);
    if (!absent(body.file_ids) && !Array.isArray(body.file_ids))
      refuse('file_ids must be an array of file ids');
    const fileIds = (body.file_ids as unknown[] | undefined) ?? [];
    if (fileIds.length > 500) refuse('file_ids may name at most 500 files');
    const toAttach = fileIds.map((id, index) => ({
      fileId: fileIdOf(id, `file_ids[${index}]`),
      path: `file_ids[${index}]`,
      attributes: {},
      chunking,
    }));
    const id = randomUUID();
    await this.checkAttachable(caller, toAttach);
    // Read before the transaction opens (the embedded database serves one session).
    const embedder = await this.embeddings.defaultEmbedder(caller.organizationId);
    await this.dataSource.transaction(async (manager) => {
      const count = await this.stores.countInOrganization(manager, caller.organizationId);
      assertUnderQuota(
        count,
        this.config.vectorStores.perOrganization,
        'vector stores',
        'QUOTA_VECTOR_STORES_PER_ORGANIZATION',
      );
      await this.stores.insert(manager, {
        id,
        organizationId: caller.organizationId,
        name: optionalString(body, 'name', 256) ?? '',
        description: optionalString(body, 'description', 512) ?? null,
        metadata: absent(body.metadata) ? {} : parseMetadata(body.metadata),
        expiresAfterDays: absent(body.expires_after) ? null : parseExpiresAfter(body.expires_after),
        embedder,
        createdAt: new Date(),
      });
      await this.attachAll(manager, caller, id, toAttach, null);
    });
    this.wakeIngestion();
    return vectorStoreView(await this.require(caller.organizationId, id));
  }

  async list(caller: FileCaller, query: Record<string, unknown>): Promise<ListView<VectorStoreView>> {
    const { limit, order, after } = parseListQuery(query);
    let cursor: { createdAt: Date; id: string } | null = null;
    if (after !== null) {
      const id = parseVectorStoreId(after);
      const last = id === null ? null : await this.stores.find(caller.organizationId, id);
      if (last === null) refuse('after names no vector store of this organization');
      cursor = { createdAt: last.createdAt, id: last.id };
    }
    const rows = await this.stores.listPage(caller.organizationId, {
      order,
      after: cursor,
      limit: limit + 1,
    });
    return listView(rows.slice(0, limit).map(vectorStoreView), rows.length > limit);
  }

  async get(caller: FileCaller, rawId: string): Promise<VectorStoreView> {
    return vectorStoreView(await this.resolve(caller, rawId));
  }

  async update(caller: FileCaller, rawId: string, raw: unknown): Promise<VectorStoreView> {
    const store = await this.resolve(caller, rawId);
    const body = bodyOf(raw, ['name', 'expires_after', 'metadata']);
    const changed = await this.stores.update(caller.organizationId, store.id, {
      name: optionalString(body, 'name', 256),
      metadata: absent(body.metadata) ? undefined : parseMetadata(body.metadata),
      expiresAfterDays:
        body.expires_after === undefined
          ? undefined
          : body.expires_after === null
            ? null
            : parseExpiresAfter(body.expires_after),
    });
    if (!changed) throw storeNotFound();
    return vectorStoreView(await this.require(caller.organizationId, store.id));
  }

  async delete(
    caller: FileCaller,
    rawId: string,
  ): Promise<{ id: string; object: 'vector_store.deleted'; deleted: true }> {
    const id = parseVectorStoreId(rawId);
    if (id === null || !(await this.stores.delete(caller.organizationId, id))) throw storeNotFound();
    return { id: rawId, object: 'vector_store.deleted', deleted: true };
  }

  /** The caller's organization's store named by an API id, or 404. */
  async resolve(caller: FileCaller, rawId: string): Promise<VectorStoreRecord> {
    const id = parseVectorStoreId(rawId);
    const store = id === null ? null : await this.stores.find(caller.organizationId, id);
    if (store === null) throw storeNotFound();
    return store;
  }

  /**
   * Checks, before the attaching transaction opens (the embedded database serves one
   * transaction at a time), that each file is visible to the caller and organization-wide.
   */
  async checkAttachable(caller: FileCaller, files: FileToAttach[]): Promise<void> {
    for (const file of files) {
      const found =
        file.fileId === null
          ? null
          : await this.files.find(caller.organizationId, caller.userId, file.fileId);
      if (found === null) throw new ApiError('file_not_found', `${file.path} names no file`);
      if (found.purpose === USER_SCOPED_PURPOSE) {
        refuse(
          `${file.path} is a user_data file, which belongs to one end user; vector stores are organization-wide: upload it with purpose "assistants"`,
        );
      }
    }
  }

  /**
   * Attaches files (checked by checkAttachable) within the store's quota of files, in the
   * caller's transaction (which then calls wakeIngestion once it commits).
   */
  async attachAll(
    manager: EntityManager,
    caller: FileCaller,
    vectorStoreId: string,
    files: FileToAttach[],
    batchId: string | null,
  ): Promise<void> {
    await manager.query('SELECT id FROM vector_stores WHERE organization_id = $1 AND id = $2 FOR UPDATE', [
      caller.organizationId,
      vectorStoreId,
    ]);
    const count = await this.storeFiles.countInStore(manager, caller.organizationId, vectorStoreId);
    assertUnderQuota(
      count + files.length - 1,
      this.config.vectorStores.filesPerStore,
      'files in one vector store',
      'QUOTA_FILES_PER_VECTOR_STORE',
    );
    for (const file of files) {
      await this.storeFiles.upsert(manager, {
        id: randomUUID(),
        organizationId: caller.organizationId,
        vectorStoreId,
        fileId: file.fileId!,
        batchId,
        attributes: file.attributes,
        chunkSize: file.chunking.maxChunkSizeTokens,
        chunkOverlap: file.chunking.chunkOverlapTokens,
        createdAt: new Date(),
      });
    }
    await this.stores.touch(caller.organizationId, [vectorStoreId], manager);
  }

  /** Starts ingestion at once: called after the attaching transaction commits. */
  wakeIngestion(): void {
    this.worker.wake();
  }

  private async require(organizationId: string, id: string): Promise<VectorStoreRecord> {
    const store = await this.stores.find(organizationId, id);
    if (store === null) throw storeNotFound();
    return store;
  }
}
