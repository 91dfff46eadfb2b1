import { FILE_PURPOSES } from '../files/file-purposes.js';
import { FILES_PAGE } from '../files/dto/files.dto.js';
import { object, objectWithOptional } from '../common/request-schema/json-schema.js';
import type { Access, OperationSpec } from './operations.js';
import { json, ref, type JsonSchema } from './schemas.js';

/**
 * The Files API (src/files, docs/knowledge.md): its operations and schemas, as OpenAI's Files API.
 * Kept apart from operations.ts; the builder joins them.
 */

const USER_KEY: Access = { kind: 'api-key', scopes: ['user'] };
const TAG = 'Files';
const NOTE =
  "A `user_data` file belongs to the `x-user-id` that uploaded it: other users, and requests without the header, get 404. Files of other purposes are the organization's.";

const userHeader: JsonSchema = { $ref: '#/components/parameters/XUserId' };
const fileIdPath: JsonSchema = {
  name: 'fileId',
  in: 'path',
  required: true,
  description: '`file-<uuid>`, as the file object shows it',
  schema: { type: 'string' },
};
const purpose: JsonSchema = { type: 'string', enum: [...FILE_PURPOSES] };

export const FILES_SCHEMAS: Record<string, JsonSchema> = {
  FileObject: objectWithOptional(
    {
      id: { type: 'string', pattern: '^file-' },
      object: { type: 'string', const: 'file' },
      bytes: { type: 'integer', minimum: 0 },
      created_at: { type: 'integer', description: 'Unix seconds' },
      filename: { type: 'string' },
      purpose,
      status: { type: 'string', const: 'processed' },
      expires_at: { type: 'integer', description: 'Unix seconds; absent when the file does not expire' },
    },
    ['expires_at'],
  ),
  FileList: object({
    object: { type: 'string', const: 'list' },
    data: { type: 'array', items: ref('FileObject') },
    first_id: { oneOf: [{ type: 'string' }, { type: 'null' }] },
    last_id: {
      oneOf: [{ type: 'string' }, { type: 'null' }],
      description: 'Pass as `after` for the next page',
    },
    has_more: { type: 'boolean' },
  }),
  FileDeleted: object({
    id: { type: 'string' },
    object: { type: 'string', const: 'file' },
    deleted: { type: 'boolean', const: true },
  }),
};

/** An operation on one file the caller can see, `/v1/files/{fileId}<suffix>`; any other is a 404. */
function oneFileOperation({
  suffix = '',
  description = NOTE,
  ...spec
}: Pick<OperationSpec, 'method' | 'operationId' | 'summary' | 'responses'> & {
  suffix?: string;
  description?: string;
}): OperationSpec {
  return {
    ...spec,
    paths: [`/v1/files/{fileId}${suffix}`],
    tag: TAG,
    description,
    access: USER_KEY,
    parameters: [userHeader, fileIdPath],
    errors: ['invalid_request', 'file_not_found'],
  };
}

export const FILES_OPERATIONS: OperationSpec[] = [
  {
    method: 'post',
    paths: ['/v1/files'],
    operationId: 'uploadFile',
    tag: TAG,
    summary: 'Upload a file',
    description: `${NOTE} At most \`FILES_MAX_BYTES\` per file and \`FILES_ORG_MAX_BYTES\` per organization; the text of text, Markdown and HTML files is extracted and kept for search.`,
    access: USER_KEY,
    parameters: [userHeader],
    requestBody: {
      required: true,
      content: {
        'multipart/form-data': {
          schema: {
            type: 'object',
            required: ['file', 'purpose'],
            properties: { file: { type: 'string', contentMediaType: 'application/octet-stream' }, purpose },
          },
        },
      },
    },
    responses: { '201': json(ref('FileObject'), 'The stored file') },
    errors: ['invalid_request', 'missing_required_field', 'file_too_large', 'file_storage_quota_exceeded'],
  },
  {
    method: 'get',
    paths: ['/v1/files'],
    operationId: 'listFiles',
    tag: TAG,
    summary: 'List the files the caller can see',
    description: `${NOTE} Paged with \`limit\` and \`after\` (the last file id of the previous page).`,
    access: USER_KEY,
    parameters: [
      userHeader,
      {
        name: 'limit',
        in: 'query',
        required: false,
        schema: { type: 'integer', minimum: 1, maximum: FILES_PAGE.max, default: FILES_PAGE.default },
      },
      { name: 'after', in: 'query', required: false, schema: { type: 'string' } },
      {
        name: 'order',
        in: 'query',
        required: false,
        schema: { type: 'string', enum: ['asc', 'desc'], default: 'desc' },
      },
      { name: 'purpose', in: 'query', required: false, schema: purpose },
    ],
    responses: { '200': json(ref('FileList'), 'A page of files, by creation time') },
    errors: ['invalid_request'],
  },
  oneFileOperation({
    method: 'get',
    operationId: 'retrieveFile',
    summary: 'Retrieve a file object',
    responses: { '200': json(ref('FileObject'), 'The file') },
  }),
  oneFileOperation({
    method: 'get',
    suffix: '/content',
    operationId: 'downloadFile',
    summary: "A file's bytes, as uploaded",
    description: `${NOTE} Always \`application/octet-stream\` with \`Content-Disposition: attachment\`.`,
    responses: {
      '200': {
        description: 'The bytes',
        content: {
          'application/octet-stream': {
            schema: { type: 'string', contentMediaType: 'application/octet-stream' },
          },
        },
      },
    },
  }),
  oneFileOperation({
    method: 'delete',
    operationId: 'deleteFile',
    summary: 'Delete a file',
    responses: { '200': json(ref('FileDeleted'), 'Deleted (the row and its bytes are removed)') },
  }),
];

export const FILES_TAG = {
  name: TAG,
  description: "OpenAI's Files API: uploads for assistants and users (docs/knowledge.md)",
};
