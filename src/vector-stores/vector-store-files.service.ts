import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ApiError } from '../common/errors/error-catalogue.js';
import { parsePrefixedUuid } from '../common/http/request-params.js';
import type { FileCaller } from '../files/files.service.js';
import {
  absent,
  bodyOf,
  fileIdOf,
  isObject,
  parseAttributes,
  parseBatchId,
  parseChunkingStrategy,
  parseListQuery,
  refuse,
} from './dto/vector-store-params.js';
import { VectorStoreFilesRepository, type VectorStoreFileStatus } from './vector-store-files.repository.js';
import {
  batchView,
  listView,
  vectorStoreFileView,
  type BatchView,
  type ListView,
  type VectorStoreFileView,
} from './vector-store-views.js';
import { VectorStoresService, type FileToAttach } from './vector-stores.service.js';

const STATUSES = ['in_progress', 'completed', 'failed', 'cancelled'];
const fileNotFound = () =>
  new ApiError('vector_store_file_not_found', 'No file with this id in this vector store');
const batchNotFound = () =>
  new ApiError('vector_store_file_batch_not_found', 'No file batch with this id in this vector store');

/** The files of a vector store, and its file batches (docs/knowledge.md). */
@Injectable()
export class VectorStoreFilesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly stores: VectorStoresService,
    private readonly storeFiles: VectorStoreFilesRepository,
  ) {}

  async attach(caller: FileCaller, rawStoreId: string, raw: unknown): Promise<VectorStoreFileView> {
    const store = await this.stores.resolve(caller, rawStoreId);
    const body = bodyOf(raw, ['file_id', 'attributes', 'chunking_strategy']);
    if (absent(body.file_id)) throw new ApiError('missing_required_field', 'Missing required field: file_id');
    const file: FileToAttach = {
      fileId: fileIdOf(body.file_id, 'file_id'),
      path: 'file_id',
      attributes: parseAttributes(body.attributes),
      chunking: parseChunkingStrategy(body.chunking_strategy),
    };
    await this.stores.checkAttachable(caller, [file]);
    await this.dataSource.transaction((manager) =>
      this.stores.attachAll(manager, caller, store.id, [file], null),
    );
    this.stores.wakeIngestion();
    return this.get(caller, rawStoreId, `file-${file.fileId}`);
  }

  async list(caller: FileCaller, rawStoreId: string, query: Record<string, unknown>, rawBatchId?: string) {
    const store = await this.stores.resolve(caller, rawStoreId);
    let batchId: string | null = null;
    if (rawBatchId !== undefined) {
      batchId = parseBatchId(rawBatchId);
      if (
        batchId === null ||
        (await this.storeFiles.findBatch(caller.organizationId, store.id, batchId)) === null
      ) {
        throw batchNotFound();
      }
    }
    const { limit, order, after } = parseListQuery(query, ['filter']);
    const filter = query.filter;
    if (filter !== undefined && (typeof filter !== 'string' || !STATUSES.includes(filter))) {
      refuse(`filter must be one of ${STATUSES.join(', ')}`);
    }
    let cursor: { createdAt: Date; id: string } | null = null;
    if (after !== null) {
      const id = parsePrefixedUuid(after, 'file-', false);
      const last = id === null ? null : await this.storeFiles.find(caller.organizationId, store.id, id);
      if (last === null) refuse('after names no file of this vector store');
      cursor = { createdAt: last.createdAt, id: last.fileId };
    }
    const rows = await this.storeFiles.listPage(caller.organizationId, store.id, {
      status: (filter as VectorStoreFileStatus | undefined) ?? null,
      batchId,
      order,
      after: cursor,
      limit: limit + 1,
    });
    return listView(rows.slice(0, limit).map(vectorStoreFileView), rows.length > limit);
  }

  async get(caller: FileCaller, rawStoreId: string, rawFileId: string): Promise<VectorStoreFileView> {
    const store = await this.stores.resolve(caller, rawStoreId);
    const fileId = parsePrefixedUuid(rawFileId, 'file-', false);
    const file = fileId === null ? null : await this.storeFiles.find(caller.organizationId, store.id, fileId);
    if (file === null) throw fileNotFound();
    return vectorStoreFileView(file);
  }

  async updateAttributes(caller: FileCaller, rawStoreId: string, rawFileId: string, raw: unknown) {
    const store = await this.stores.resolve(caller, rawStoreId);
    const body = bodyOf(raw, ['attributes']);
    if (body.attributes === undefined)
      throw new ApiError('missing_required_field', 'Missing required field: attributes');
    const fileId = parsePrefixedUuid(rawFileId, 'file-', false);
    const attributes = parseAttributes(body.attributes);
    if (
      fileId === null ||
      !(await this.storeFiles.updateAttributes(caller.organizationId, store.id, fileId, attributes))
    ) {
      throw fileNotFound();
    }
    return this.get(caller, rawStoreId, rawFileId);
  }

  async delete(caller: FileCaller, rawStoreId: string, rawFileId: string) {
    const store = await this.stores.resolve(caller, rawStoreId);
    const fileId = parsePrefixedUuid(rawFileId, 'file-', false);
    if (fileId === null || !(await this.storeFiles.delete(caller.organizationId, store.id, fileId))) {
      throw fileNotFound();
    }
    return { id: rawFileId, object: 'vector_store.file.deleted' as const, deleted: true };
  }

  async createBatch(caller: FileCaller, rawStoreId: string, raw: unknown): Promise<BatchView> {
    const store = await this.stores.resolve(caller, rawStoreId);
    const body = bodyOf(raw, ['file_ids', 'files', 'attributes', 'chunking_strategy']);
    const attributes = parseAttributes(body.attributes);
    const chunking = parseChunkingStrategy(body.chunking_strategy);
    if (!absent(body.file_ids) && !absent(body.files)) refuse('Send file_ids or files, not both');
    let files: FileToAttach[];
    if (Array.isArray(body.file_ids)) {
      files = body.file_ids.map((id, i) => ({
        fileId: fileIdOf(id, `file_ids[${i}]`),
        path: `file_ids[${i}]`,
        attributes,
        chunking,
      }));
    } else if (Array.isArray(body.files)) {
      files = body.files.map((entry, i) => {
        const path = `files[${i}]`;
        if (!isObject(entry)) refuse(`${path} must be an object`);
        for (const key of Object.keys(entry)) {
          if (!['file_id', 'attributes', 'chunking_strategy'].includes(key))
            refuse(`Unknown parameter: ${path}.${key}`);
        }
        return {
          fileId: fileIdOf(entry.file_id, `${path}.file_id`),
          path,
          attributes: absent(entry.attributes)
            ? attributes
            : parseAttributes(entry.attributes, `${path}.attributes`),
          chunking: absent(entry.chunking_strategy)
            ? chunking
            : parseChunkingStrategy(entry.chunking_strategy, `${path}.chunking_strategy`),
        };
      });
    } else {
      throw new ApiError('missing_required_field', 'Missing required field: file_ids (or files)');
    }
    if (files.length === 0 || files.length > 500) refuse('A batch holds 1 to 500 files');
    const batchId = randomUUID();
    await this.stores.checkAttachable(caller, files);
    await this.dataSource.transaction(async (manager) => {
      await this.storeFiles.insertBatch(manager, {
        id: batchId,
        organizationId: caller.organizationId,
        vectorStoreId: store.id,
        createdAt: new Date(),
      });
      await this.stores.attachAll(manager, caller, store.id, files, batchId);
    });
    this.stores.wakeIngestion();
    return this.getBatch(caller, rawStoreId, `vsfb_${batchId}`);
  }

  async getBatch(caller: FileCaller, rawStoreId: string, rawBatchId: string): Promise<BatchView> {
    const store = await this.stores.resolve(caller, rawStoreId);
    const batchId = parseBatchId(rawBatchId);
    const batch =
      batchId === null ? null : await this.storeFiles.findBatch(caller.organizationId, store.id, batchId);
    if (batch === null) throw batchNotFound();
    return batchView(batchId!, store.id, batch.createdAt, batch.counts);
  }

  async cancelBatch(caller: FileCaller, rawStoreId: string, rawBatchId: string): Promise<BatchView> {
    const batch = await this.getBatch(caller, rawStoreId, rawBatchId);
    const store = await this.stores.resolve(caller, rawStoreId);
    await this.storeFiles.cancelBatch(caller.organizationId, store.id, parseBatchId(batch.id)!);
    return this.getBatch(caller, rawStoreId, rawBatchId);
  }
}

export type FileList = ListView<VectorStoreFileView>;
