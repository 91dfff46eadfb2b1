import {
  constant,
  nullable,
  object,
  objectWithOptional,
  ref,
} from '../../common/request-schema/json-schema.js';
import type { JsonSchema } from '../../common/request-schema/request-field.js';

/**
 * The nested shapes of the Responses request (input items and their parts, tools, the text
 * format), beside the fields that name them (create-response.fields.ts): the OpenAPI document
 * takes them from here (components.schemas) as it takes the request bodies from the fields, so
 * the request is described in this folder only. The parsers of these shapes are the ones each
 * field's `parse` calls (src/responses/dto/); request-shapes.spec.ts holds the two together.
 */
export const REQUEST_SHAPES = {
  InputTextPart: object({
    type: { type: 'string', enum: ['input_text', 'output_text', 'text'] },
    text: { type: 'string' },
  }),
  InputImagePart: {
    type: 'object',
    required: ['type', 'image_url'],
    properties: {
      type: constant('input_image'),
      image_url: {
        type: 'string',
        description:
          'An http(s) URL (fetched by the service through the SSRF guard and sent inline) or a base64 data URL ' +
          'of a PNG, JPEG, GIF or WebP image, at most INPUT_IMAGE_MAX_BYTES. `file_id` is refused.',
      },
      detail: { type: 'string', enum: ['low', 'high', 'auto'], default: 'auto' },
    },
    description: "User messages only; the assistant's model needs the `vision` setting.",
  },
  InputFilePart: {
    type: 'object',
    required: ['type'],
    properties: {
      type: constant('input_file'),
      filename: { type: 'string', maxLength: 255 },
      file_data: {
        type: 'string',
        description: 'Base64, or a base64 data URL; at most INPUT_FILE_MAX_BYTES',
      },
      file_url: {
        type: 'string',
        description: 'An http(s) URL, fetched by the service through the SSRF guard',
      },
      file_id: {
        type: 'string',
        description:
          "A file uploaded to /v1/files that the caller may see (its organization's; a `user_data` file only " +
          "for its end user's `x-user-id`), else 404 `file_not_found`. The model gets the file's extracted text.",
      },
    },
    description:
      'Exactly one of `file_id`, `file_data` and `file_url`. User messages only; for `file_data` and `file_url` the ' +
      "assistant's model needs the `fileInput` setting (a `file_id` reaches any model as text).",
  },
  InputMessage: {
    type: 'object',
    required: ['role', 'content'],
    properties: {
      type: constant('message'),
      role: { type: 'string', enum: ['user', 'assistant', 'system', 'developer'] },
      content: {
        oneOf: [
          { type: 'string' },
          {
            type: 'array',
            items: { oneOf: [ref('InputTextPart'), ref('InputImagePart'), ref('InputFilePart')] },
          },
        ],
      },
    },
    description: '`type` may be omitted. `system` and `developer` messages become system messages in place.',
  },
  FunctionCallOutputInput: {
    type: 'object',
    required: ['type', 'call_id', 'output'],
    properties: {
      type: constant('function_call_output'),
      call_id: {
        type: 'string',
        minLength: 1,
        description: 'A call left pending by `previous_response_id` (or sent in this input)',
      },
      output: { type: 'string', description: 'Typically JSON-encoded; any other JSON value is serialized' },
    },
    description: 'Extra fields such as `id` or `status` (as the Agents SDK sends) are accepted and ignored.',
  },
  FunctionCallInput: {
    type: 'object',
    required: ['type', 'call_id', 'name', 'arguments'],
    properties: {
      type: constant('function_call'),
      call_id: { type: 'string', minLength: 1 },
      name: { type: 'string' },
      arguments: { type: 'string' },
    },
    description: 'A call sent back by a client that manages its own history.',
  },
  ReasoningInput: {
    type: 'object',
    required: ['type'],
    properties: {
      type: constant('reasoning'),
      id: { type: 'string' },
      summary: { type: 'array', items: { type: 'object', properties: { text: { type: 'string' } } } },
      content: { type: 'array', items: { type: 'object', properties: { text: { type: 'string' } } } },
    },
    description: 'A reasoning item sent back with a client-managed history: stored, not resent to the model.',
  },
  InputItem: {
    oneOf: [
      ref('InputMessage'),
      ref('FunctionCallOutputInput'),
      ref('FunctionCallInput'),
      ref('ReasoningInput'),
      ref('CompactionItem'),
    ],
    description: 'Any other `type` or `role` is 400 `invalid_input_type`.',
  },
  FunctionTool: {
    type: 'object',
    required: ['type', 'name'],
    properties: {
      type: {
        const: 'function',
        description: 'Only client-side function tools; other types are 400 `tool_not_supported_for_model`',
      },
      name: { type: 'string', pattern: '^[a-zA-Z0-9_-]{1,64}$', description: 'Unique within the request' },
      description: { type: 'string' },
      parameters: {
        type: 'object',
        description: 'JSON Schema of the arguments (`type: object`, `properties`, `required`)',
      },
      strict: { type: 'boolean' },
    },
  },
  WebSearchTool: {
    type: 'object',
    required: ['type', 'external_web_access'],
    additionalProperties: false,
    description:
      "Offline web search (docs/knowledge.md): the organization's cache of earlier live searches, nothing fetched; at most one per request",
    properties: {
      type: { type: 'string', enum: ['web_search', 'web_search_2025_08_26'] },
      external_web_access: {
        const: false,
        description: '`true` (live search) is refused: live web search is a tool configured on the assistant',
      },
      search_context_size: {
        type: 'string',
        enum: ['low', 'medium', 'high'],
        description: '3, 5 (default) or 10 results',
      },
      filters: {
        type: 'object',
        additionalProperties: false,
        properties: {
          allowed_domains: { type: 'array', minItems: 1, maxItems: 100, items: { type: 'string' } },
        },
      },
      user_location: { type: 'null', description: 'Only null: cached results are not localized' },
    },
  },
  FileSearchTool: {
    type: 'object',
    required: ['type', 'vector_store_ids'],
    additionalProperties: false,
    description: "Searches the organization's vector stores (docs/knowledge.md); at most one per request",
    properties: {
      type: { const: 'file_search' },
      vector_store_ids: {
        type: 'array',
        minItems: 1,
        items: { type: 'string' },
        description: '`vs_<uuid>` ids',
      },
      max_num_results: { type: 'integer', minimum: 1, maximum: 50 },
      filters: {
        type: 'object',
        description:
          'A comparison (`eq`, `ne`, `gt`, `gte`, `lt`, `lte`, `in`, `nin`) or a compound (`and`, `or`) filter on file attributes',
      },
      ranking_options: {
        type: 'object',
        description:
          '`score_threshold` (0-1) and `hybrid_search` weights (`embedding_weight`, `text_weight`)',
      },
    },
  },
  CompactionItem: objectWithOptional(
    {
      type: constant('compaction'),
      id: { type: 'string' },
      encrypted_content: {
        type: 'string',
        description:
          'Opaque: send it back as returned. Anything this service did not write is 400 `invalid_request`.',
      },
    },
    ['id'],
    {
      description:
        'The summary of a compacted conversation (POST /v1/responses/compact); as input the model sees the summary.',
    },
  ),
  /** `text.format` of a request; the Response echoes it. */
  TextFormat: {
    oneOf: [
      object({ type: constant('text') }),
      object({ type: constant('json_object') }),
      object({
        type: constant('json_schema'),
        name: { type: 'string', pattern: '^[a-zA-Z0-9_-]{1,64}$' },
        description: nullable({ type: 'string' }),
        schema: {
          description:
            'A JSON Schema object in a request; `null` in the Response (as the specification has it)',
        },
        strict: { type: 'boolean' },
      }),
    ],
  },
} satisfies Record<string, JsonSchema>;

export type RequestShape = keyof typeof REQUEST_SHAPES;

/** A reference to one of the shapes above: a misspelt name does not compile. */
export const shapeRef = (name: RequestShape): JsonSchema => ref(name);
