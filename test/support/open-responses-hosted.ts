import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

/**
 * The hosted search tools as later Open Responses releases define them (the vendored 2026-04-24
 * document has function tools only): the `file_search` and `web_search` tools in a Response's
 * `tools`, the `{type: "file_search"|"web_search"}` tool choices, and the `file_search_call` and
 * `web_search_call` output items. Written from the specification's published schemas
 * (FileSearchTool, WebSearchTool, FileSearchCall, WebSearchCall and their parts), field for
 * field, so a Response using them can be checked whole (open-responses.ts).
 */

type Json = Record<string, any>;

const nullable = (schema: Json): Json => ({ anyOf: [schema, { type: 'null' }] });
const oneType = (type: string): Json => ({ type: 'string', const: type });

const RANKING_OPTIONS = {
  type: 'object',
  required: ['ranker', 'score_threshold'],
  properties: {
    ranker: { type: 'string', enum: ['auto', 'default-2024-11-15'] },
    score_threshold: { type: 'number' },
    hybrid_search: {
      type: 'object',
      required: ['embedding_weight', 'text_weight'],
      properties: { embedding_weight: { type: 'number' }, text_weight: { type: 'number' } },
    },
  },
};

const SCHEMAS: Record<string, Json> = {
  file_search: {
    type: 'object',
    required: ['type', 'vector_store_ids', 'max_num_results', 'ranking_options', 'filters'],
    properties: {
      type: oneType('file_search'),
      vector_store_ids: { type: 'array', items: { type: 'string' } },
      max_num_results: { type: 'integer' },
      ranking_options: RANKING_OPTIONS,
      filters: nullable({ type: 'object', required: ['type'] }),
    },
  },
  web_search: {
    type: 'object',
    required: ['type'],
    properties: {
      type: oneType('web_search'),
      user_location: nullable({ type: 'object' }),
      search_context_size: { type: 'string', enum: ['low', 'medium', 'high'] },
      external_web_access: { type: 'boolean' },
    },
  },
  file_search_call: {
    type: 'object',
    required: ['type', 'id', 'status', 'queries', 'results'],
    properties: {
      type: oneType('file_search_call'),
      id: { type: 'string' },
      status: { type: 'string', enum: ['in_progress', 'searching', 'completed', 'incomplete', 'failed'] },
      queries: { type: 'array', items: { type: 'string' } },
      results: nullable({
        type: 'array',
        items: {
          type: 'object',
          required: ['file_id', 'filename', 'text', 'attributes', 'score', 'vector_store_id'],
          properties: {
            file_id: { type: 'string' },
            filename: { type: 'string' },
            text: { type: 'string' },
            score: nullable({ type: 'number' }),
            vector_store_id: nullable({ type: 'string' }),
          },
        },
      }),
      created_by: { type: 'string' },
    },
  },
  web_search_call: {
    type: 'object',
    required: ['type', 'id', 'status'],
    properties: {
      type: oneType('web_search_call'),
      id: { type: 'string' },
      status: { type: 'string', enum: ['in_progress', 'searching', 'completed', 'failed'] },
      action: {
        type: 'object',
        required: ['type'],
        properties: {
          type: oneType('search'),
          query: nullable({ type: 'string' }),
          queries: { type: 'array', items: { type: 'string' } },
          sources: nullable({
            type: 'array',
            items: {
              type: 'object',
              required: ['type', 'url'],
              properties: { type: oneType('url'), url: { type: 'string' } },
            },
          }),
        },
      },
      created_by: { type: 'string' },
    },
  },
  tool_choice: {
    type: 'object',
    required: ['type'],
    properties: { type: { type: 'string', enum: ['file_search', 'web_search'] } },
  },
};

/** The tool types, tool choices and item types this file checks (set aside from the vendored check). */
export const HOSTED_TOOL_TYPES: readonly string[] = ['file_search', 'web_search'];
export const HOSTED_ITEM_TYPES: readonly string[] = ['file_search_call', 'web_search_call'];

let validators: Map<string, ValidateFunction> | undefined;

function validator(name: string): ValidateFunction {
  if (!validators) {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    validators = new Map(Object.entries(SCHEMAS).map(([key, schema]) => [key, ajv.compile(schema)]));
  }
  return validators.get(name)!;
}

/** What is wrong with a hosted tool, tool choice or item (`kind` is its schema's name), at `path`. */
export function hostedProblems(kind: string, value: unknown, path: string): string[] {
  const validate = validator(kind);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((error) => `${path}${error.instancePath} ${error.message}`);
}
