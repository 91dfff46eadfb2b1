import { objectWithOptional } from '../common/request-schema/json-schema.js';
import type { Access, OperationSpec } from './operations.js';
import { json, jsonBody, pathParam, ref, type JsonSchema } from './schemas.js';

/**
 * The Vector Stores API (src/vector-stores, docs/knowledge.md): its operations and schemas, as
 * OpenAI's. Kept apart from operations.ts; the builder joins them.
 */

const USER_KEY: Access = { kind: 'api-key', scopes: ['user'] };
const TAG = 'Vector stores';
const STORE = pathParam('vectorStoreId', '`vs_<uuid>`');
const FILE = pathParam('fileId', '`file-<uuid>`, the id of the attached file');
const BATCH = pathParam('batchId', '`vsfb_<uuid>`');
const query = (name: string, schema: JsonSchema): JsonSchema => ({
  name,
  in: 'query',
  required: false,
  schema,
});
const PAGING = [
  query('limit', { type: 'integer', minimum: 1, maximum: 100, default: 20 }),
  query('after', { type: 'string' }),
  query('order', { type: 'string', enum: ['asc', 'desc'], default: 'desc' }),
];
const FILE_FILTER = query('filter', {
  type: 'string',
  enum: ['in_progress', 'completed', 'failed', 'cancelled'],
});
const counts: JsonSchema = {
  type: 'object',
  required: ['in_progress', 'completed', 'failed', 'cancelled', 'total'],
  properties: Object.fromEntries(
    ['in_progress', 'completed', 'failed', 'cancelled', 'total'].map((key) => [key, { type: 'integer' }]),
  ),
};
const attributes: JsonSchema = {
  type: 'object',
  maxProperties: 16,
  additionalProperties: {
    oneOf: [{ type: 'string', maxLength: 512 }, { type: 'number' }, { type: 'boolean' }],
  },
};
const chunking: JsonSchema = {
  description:
    '`{type: "auto"}` (800 tokens, 400 overlap) or `{type: "static", static: {max_chunk_size_tokens: 100–4096, chunk_overlap_tokens: ≤ half}}`',
  type: 'object',
  required: ['type'],
  properties: { type: { type: 'string', enum: ['auto', 'static'] }, static: { type: 'object' } },
};
const list = (item: string): JsonSchema => ({
  type: 'object',
  required: ['object', 'data', 'first_id', 'last_id', 'has_more'],
  properties: {
    object: { type: 'string', const: 'list' },
    data: { type: 'array', items: ref(item) },
    first_id: { oneOf: [{ type: 'string' }, { type: 'null' }] },
    last_id: { oneOf: [{ type: 'string' }, { type: 'null' }] },
    has_more: { type: 'boolean' },
  },
});
const deleted = (object: string): JsonSchema => ({
  type: 'object',
  required: ['id', 'object', 'deleted'],
  properties: {
    id: { type: 'string' },
    object: { type: 'string', const: object },
    deleted: { type: 'boolean' },
  },
});

export const VECTOR_STORES_SCHEMAS: Record<string, JsonSchema> = {
  VectorStore: {
    type: 'object',
    required: [
      'id',
      'object',
      'created_at',
      'name',
      'usage_bytes',
      'file_counts',
      'status',
      'expires_at',
      'last_active_at',
      'metadata',
    ],
    properties: {
      id: { type: 'string', pattern: '^vs_' },
      object: { type: 'string', const: 'vector_store' },
      created_at: { type: 'integer' },
      name: { type: 'string' },
      description: { type: 'string' },
      usage_bytes: { type: 'integer' },
      file_counts: counts,
      status: { type: 'string', enum: ['expired', 'in_progress', 'completed'] },
      expires_after: {
        type: 'object',
        properties: { anchor: { const: 'last_active_at' }, days: { type: 'integer' } },
      },
      expires_at: { oneOf: [{ type: 'integer' }, { type: 'null' }] },
      last_active_at: { type: 'integer' },
      metadata: { type: 'object', additionalProperties: { type: 'string' } },
    },
  },
  VectorStoreList: list('VectorStore'),
  VectorStoreDeleted: deleted('vector_store.deleted'),
  VectorStoreFile: objectWithOptional(
    {
      id: { type: 'string', pattern: '^file-' },
      object: { type: 'string', const: 'vector_store.file' },
      usage_bytes: { type: 'integer' },
      created_at: { type: 'integer' },
      vector_store_id: { type: 'string' },
      status: { type: 'string', enum: ['in_progress', 'completed', 'failed', 'cancelled'] },
      last_error: {
        oneOf: [
          { type: 'null' },
          {
            type: 'object',
            properties: {
              code: { enum: ['server_error', 'unsupported_file', 'invalid_file'] },
              message: { type: 'string' },
            },
          },
        ],
      },
      attributes,
      chunking_strategy: { type: 'object' },
    },
    ['attributes', 'chunking_strategy'],
  ),
  VectorStoreFileList: list('VectorStoreFile'),
  VectorStoreFileDeleted: deleted('vector_store.file.deleted'),
  VectorStoreFileBatch: {
    type: 'object',
    required: ['id', 'object', 'created_at', 'vector_store_id', 'status', 'file_counts'],
    properties: {
      id: { type: 'string', pattern: '^vsfb_' },
      object: { type: 'string', const: 'vector_store.files_batch' },
      created_at: { type: 'integer' },
      vector_store_id: { type: 'string' },
      status: { type: 'string', enum: ['in_progress', 'completed', 'cancelled', 'failed'] },
      file_counts: counts,
    },
  },
  VectorStoreSearchResultsPage: {
    type: 'object',
    required: ['object', 'search_query', 'data', 'has_more', 'next_page'],
    properties: {
      object: { type: 'string', const: 'vector_store.search_results.page' },
      search_query: { type: 'array', items: { type: 'string' } },
      data: {
        type: 'array',
        items: {
          type: 'object',
          required: ['file_id', 'filename', 'score', 'attributes', 'content'],
          properties: {
            file_id: { type: 'string' },
            filename: { type: 'string' },
            score: { type: 'number', minimum: 0, maximum: 1 },
            attributes,
            content: {
              type: 'array',
              items: { type: 'object', properties: { type: { const: 'text' }, text: { type: 'string' } } },
            },
          },
        },
      },
      has_more: { type: 'boolean', const: false },
      next_page: { type: 'null' },
    },
  },
};

const op = (
  method: OperationSpec['method'],
  route: string,
  operationId: string,
  summary: string,
  parameters: JsonSchema[],
  response: [string, string],
  errors: OperationSpec['errors'],
  requestBody?: JsonSchema,
): OperationSpec => ({
  method,
  paths: [route],
  operationId,
  tag: TAG,
  summary,
  access: USER_KEY,
  parameters,
  ...(requestBody ? { requestBody } : {}),
  responses: { [response[0]]: json(ref(response[1]), summary) },
  errors,
});

const S = '/v1/vector_stores/{vectorStoreId}';
const NF: OperationSpec['errors'] = ['invalid_request', 'vector_store_not_found'];
const object: JsonSchema = { type: 'object' };
const fileBody: JsonSchema = {
  type: 'object',
  required: ['file_id'],
  properties: { file_id: { type: 'string' }, attributes, chunking_strategy: chunking },
};

export const VECTOR_STORES_OPERATIONS: OperationSpec[] = [
  op(
    'post',
    '/v1/vector_stores',
    'createVectorStore',
    'Create a vector store',
    [],
    ['201', 'VectorStore'],
    ['invalid_request', 'file_not_found', 'quota_exceeded'],
    jsonBody(object),
  ),
  op(
    'get',
    '/v1/vector_stores',
    'listVectorStores',
    "The organization's vector stores",
    PAGING,
    ['200', 'VectorStoreList'],
    ['invalid_request'],
  ),
  op('get', S, 'retrieveVectorStore', 'Retrieve a vector store', [STORE], ['200', 'VectorStore'], NF),
  op(
    'post',
    S,
    'modifyVectorStore',
    'Modify a vector store',
    [STORE],
    ['200', 'VectorStore'],
    NF,
    jsonBody(object),
  ),
  op(
    'delete',
    S,
    'deleteVectorStore',
    'Delete a vector store and its chunks',
    [STORE],
    ['200', 'VectorStoreDeleted'],
    NF,
  ),
  op(
    'post',
    `${S}/search`,
    'searchVectorStore',
    'Hybrid search of a vector store',
    [STORE],
    ['200', 'VectorStoreSearchResultsPage'],
    [...NF, 'missing_required_field'],
    jsonBody(object),
  ),
  op(
    'post',
    `${S}/files`,
    'createVectorStoreFile',
    'Attach a file (ingested in the background)',
    [STORE],
    ['201', 'VectorStoreFile'],
    [...NF, 'file_not_found', 'quota_exceeded', 'missing_required_field'],
    jsonBody(fileBody),
  ),
  op(
    'get',
    `${S}/files`,
    'listVectorStoreFiles',
    "A vector store's files",
    [STORE, ...PAGING, FILE_FILTER],
    ['200', 'VectorStoreFileList'],
    NF,
  ),
  op(
    'get',
    `${S}/files/{fileId}`,
    'retrieveVectorStoreFile',
    'Retrieve an attached file',
    [STORE, FILE],
    ['200', 'VectorStoreFile'],
    [...NF, 'vector_store_file_not_found'],
  ),
  op(
    'post',
    `${S}/files/{fileId}`,
    'updateVectorStoreFileAttributes',
    "Replace an attached file's attributes",
    [STORE, FILE],
    ['200', 'VectorStoreFile'],
    [...NF, 'vector_store_file_not_found', 'missing_required_field'],
    jsonBody(object),
  ),
  op(
    'delete',
    `${S}/files/{fileId}`,
    'deleteVectorStoreFile',
    'Detach a file (its chunks go; the file stays)',
    [STORE, FILE],
    ['200', 'VectorStoreFileDeleted'],
    [...NF, 'vector_store_file_not_found'],
  ),
  op(
    'post',
    `${S}/file_batches`,
    'createVectorStoreFileBatch',
    'Attach several files at once',
    [STORE],
    ['201', 'VectorStoreFileBatch'],
    [...NF, 'file_not_found', 'quota_exceeded', 'missing_required_field'],
    jsonBody(object),
  ),
  op(
    'get',
    `${S}/file_batches/{batchId}`,
    'retrieveVectorStoreFileBatch',
    'Retrieve a file batch',
    [STORE, BATCH],
    ['200', 'VectorStoreFileBatch'],
    [...NF, 'vector_store_file_batch_not_found'],
  ),
  op(
    'post',
    `${S}/file_batches/{batchId}/cancel`,
    'cancelVectorStoreFileBatch',
    'Cancel what of a batch is not ingested yet',
    [STORE, BATCH],
    ['200', 'VectorStoreFileBatch'],
    [...NF, 'vector_store_file_batch_not_found'],
  ),
  op(
    'get',
    `${S}/file_batches/{batchId}/files`,
    'listVectorStoreFileBatchFiles',
    "A batch's files",
    [STORE, BATCH, ...PAGING, FILE_FILTER],
    ['200', 'VectorStoreFileList'],
    [...NF, 'vector_store_file_batch_not_found'],
  ),
];

export const VECTOR_STORES_TAG = {
  name: TAG,
  description:
    "OpenAI's Vector Stores API: files chunked, embedded and searched for file_search (docs/knowledge.md)",
};
