import { toFileId } from '../files/dto/files.dto.js';
import { toBatchId, toVectorStoreId } from './dto/vector-store-params.js';
import type { AttributeValue } from './search/attribute-filter.js';
import type {
  LastError,
  VectorStoreFileRecord,
  VectorStoreFileStatus,
} from './vector-store-files.repository.js';
import type { FileCounts, VectorStoreRecord } from './vector-stores.repository.js';

/** OpenAI's objects, as the official SDKs read them (resources/vector-stores/*). */
export interface VectorStoreView {
  id: string;
  object: 'vector_store';
  created_at: number;
  name: string;
  description?: string;
  usage_bytes: number;
  file_counts: FileCounts;
  status: 'expired' | 'in_progress' | 'completed';
  expires_after?: { anchor: 'last_active_at'; days: number };
  expires_at: number | null;
  last_active_at: number;
  metadata: Record<string, string>;
}

export interface VectorStoreFileView {
  id: string;
  object: 'vector_store.file';
  usage_bytes: number;
  created_at: number;
  vector_store_id: string;
  status: VectorStoreFileStatus;
  last_error: LastError | null;
  attributes: Record<string, AttributeValue>;
  chunking_strategy: {
    type: 'static';
    static: { max_chunk_size_tokens: number; chunk_overlap_tokens: number };
  };
}

export interface BatchView {
  id: string;
  object: 'vector_store.files_batch';
  created_at: number;
  vector_store_id: string;
  status: 'in_progress' | 'completed' | 'cancelled' | 'failed';
  file_counts: FileCounts;
}

export interface ListView<T extends { id: string }> {
  object: 'list';
  data: T[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

const DAY_MS = 86_400_000;
export const seconds = (date: Date): number => Math.floor(date.getTime() / 1000);

/** When the store expires (null: never), counted from its last activity. */
export function expiresAt(store: VectorStoreRecord): Date | null {
  return store.expiresAfterDays === null
    ? null
    : new Date(store.lastActiveAt.getTime() + store.expiresAfterDays * DAY_MS);
}

export function isExpired(store: VectorStoreRecord, now = new Date()): boolean {
  const at = expiresAt(store);
  return at !== null && at <= now;
}

export function vectorStoreView(store: VectorStoreRecord): VectorStoreView {
  const expiry = expiresAt(store);
  return {
    id: toVectorStoreId(store.id),
    object: 'vector_store',
    created_at: seconds(store.createdAt),
    name: store.name,
    ...(store.description === null ? {} : { description: store.description }),
    usage_bytes: store.usageBytes,
    file_counts: store.fileCounts,
    status: isExpired(store) ? 'expired' : store.fileCounts.in_progress > 0 ? 'in_progress' : 'completed',
    ...(store.expiresAfterDays === null
      ? {}
      : { expires_after: { anchor: 'last_active_at', days: store.expiresAfterDays } }),
    expires_at: expiry === null ? null : seconds(expiry),
    last_active_at: seconds(store.lastActiveAt),
    metadata: store.metadata,
  };
}

export function vectorStoreFileView(file: VectorStoreFileRecord): VectorStoreFileView {
  return {
    id: toFileId(file.fileId),
    object: 'vector_store.file',
    usage_bytes: file.usageBytes,
    created_at: seconds(file.createdAt),
    vector_store_id: toVectorStoreId(file.vectorStoreId),
    status: file.status,
    last_error: file.lastError,
    attributes: file.attributes,
    chunking_strategy: {
      type: 'static',
      static: { max_chunk_size_tokens: file.chunkSize, chunk_overlap_tokens: file.chunkOverlap },
    },
  };
}

export function batchView(
  id: string,
  vectorStoreId: string,
  createdAt: Date,
  counts: Record<VectorStoreFileStatus, number>,
): BatchView {
  const total = counts.in_progress + counts.completed + counts.failed + counts.cancelled;
  const status =
    counts.in_progress > 0
      ? 'in_progress'
      : counts.cancelled > 0
        ? 'cancelled'
        : counts.failed > 0 && counts.completed === 0
          ? 'failed'
          : 'completed';
  return {
    id: toBatchId(id),
    object: 'vector_store.files_batch',
    created_at: seconds(createdAt),
    vector_store_id: toVectorStoreId(vectorStoreId),
    status,
    file_counts: { ...counts, total },
  };
}

export function listView<T extends { id: string }>(data: T[], hasMore: boolean): ListView<T> {
  return {
    object: 'list',
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: hasMore,
  };
}
