import { ApiError } from '../../common/errors/error-catalogue.js';
import {
  MAX_TOOLS,
  parseAssistantId,
  parseConversationParam,
  parseTools,
} from '../dto/create-response.dto.js';
import { parseInput } from '../dto/input-items.parser.js';
import { shapeRef } from './request-shapes.js';
import { splitWebSearchTool } from '../../tools/web-search/offline-web-search.tool.js';
import { splitFileSearchTool } from '../../vector-stores/file-search/file-search.tool.js';
import {
  IDENTIFIER_MAX_LENGTH,
  METADATA_MAX_KEY_LENGTH,
  METADATA_MAX_KEYS,
  METADATA_MAX_VALUE_LENGTH,
  parseInclude,
  parseMetadata,
  parseReasoning,
  parseText,
  parseToolChoice,
} from '../dto/response-options.dto.js';
import {
  absent,
  booleanField,
  customField,
  enumField,
  KNOWN_FIELDS_ONLY,
  numberField,
  objectField,
  refuse,
  refusedField,
  stringField,
  type JsonSchema,
} from '../../common/request-schema/request-field.js';

/** `model`: the assistant, `asst_<uuid>` or the bare UUID → the bare UUID (POST /v1/responses and compact). */
export const modelField = customField('model', {
  required: true,
  schema: { type: 'string', examples: ['asst_8eee17c3-5c44-4b4e-9d0e-0c1f0f3b9a11'] },
  description: 'The assistant: `asst_<uuid>` or the bare UUID',
  error: 'invalid_model',
  parse: (value) => {
    if (typeof value !== 'string') throw new ApiError('invalid_model', 'model must be an assistant id');
    const assistantId = parseAssistantId(value);
    if (!assistantId)
      throw new ApiError('invalid_model', 'model must be an assistant UUID, bare or as asst_<uuid>');
    return assistantId;
  },
});

export const INPUT_SCHEMA: JsonSchema = {
  oneOf: [
    { type: 'string', description: 'One user message' },
    { type: 'array', minItems: 1, items: shapeRef('InputItem') },
  ],
};

/**
 * POST /v1/responses, in the order the contract reports the first error (spec 7.3): body, required
 * fields, model, how the turn runs, the thread, unknown and refused fields, the options, tools,
 * input. Every field is honoured or refused by name (docs/api.md, "Request parameters").
 */
export const CREATE_RESPONSE_FIELDS = [
  modelField,
  booleanField('stream', false, { description: '`true` answers with `text/event-stream`' }),
  booleanField('background', false, {
    description:
      '`true` runs the turn server-side whatever the client does: the reply is the Response in status ' +
      '`queued` (or, with `stream`, a stream that can be resumed with `GET /v1/responses/{id}?stream=true`); ' +
      'refused with `store: false`',
  }),
  {
    rule: 'background needs store',
    check: (body: Record<string, unknown>) => {
      if (body.background === true && body.store === false) {
        refuse('background: true needs the response to be stored (store must not be false)');
      }
    },
  },
  stringField('instructions', { description: 'Added for this turn only' }),
  stringField('previous_response_id', {
    description: 'Continue the thread of this response; omit to start a new conversation',
  }),
  customField('conversation', {
    schema: {
      oneOf: [
        { type: 'string', description: '`conv_<uuid>` or the bare UUID' },
        { type: 'object', required: ['id'], properties: { id: { type: 'string' } } },
      ],
    },
    description:
      'Continue this conversation from its newest turn and append to it (the alternative to ' +
      '`previous_response_id`; both at once is 400)',
    error: 'invalid_request',
    parse: (value, body) => {
      const conversationId = parseConversationParam(value);
      if (conversationId !== null && !absent(body.previous_response_id)) {
        refuse('previous_response_id and conversation are mutually exclusive: send only one of them');
      }
      return conversationId;
    },
  }),
  KNOWN_FIELDS_ONLY,
  refusedField('prompt', 'prompt (stored prompt templates) is not supported; send instructions instead', {
    description: 'Refused by name: no stored prompt templates; send `instructions` instead',
  }),
  refusedField('context_management', 'context_management is not supported; see truncation', {
    description: 'Refused by name; see `truncation`',
  }),
  objectField('stream_options', { description: 'Accepted (no obfuscation padding is ever added)' }),
  customField('include', {
    schema: { type: 'array', items: { type: 'string' } },
    description:
      'Extra output to include: `message.output_text.logprobs`, `file_search_call.results`, `web_search_call.action.sources` add to the output; other OpenAI values are accepted and add nothing',
    error: 'invalid_request',
    parse: parseInclude,
  }),
  numberField('top_logprobs', 0, 20, {
    integer: true,
    description: 'With `include: ["message.output_text.logprobs"]`: alternatives per token',
  }),
  numberField('temperature', 0, 2, { description: "Sampling temperature; else the assistant's default" }),
  numberField('top_p', 0, 1, { description: 'Nucleus sampling' }),
  numberField('presence_penalty', -2, 2, { description: 'Penalty for tokens already present' }),
  numberField('frequency_penalty', -2, 2, { description: 'Penalty by token frequency' }),
  numberField('max_output_tokens', 1, 10_000_000, {
    integer: true,
    description: "For the whole response; above the assistant's `maxOutputTokensLimit` is refused",
  }),
  numberField('max_tool_calls', 1, 10_000, {
    integer: true,
    description: 'Server-side tool calls of the turn',
  }),
  customField('tool_choice', {
    schema: {
      oneOf: [
        { type: 'string', enum: ['auto', 'none', 'required'] },
        { type: 'object', required: ['type'], properties: { type: { type: 'string' } } },
      ],
      default: 'auto',
    },
    description:
      '`auto`, `none`, `required`, `{type: "function", name}`, `{type: "allowed_tools", mode, tools}`, `{type: "web_search"}`, `{type: "file_search"}`',
    error: 'invalid_request',
    parse: parseToolChoice,
  }),
  booleanField('parallel_tool_calls', true, { description: '`false`: at most one tool call per model call' }),
  customField('text', {
    schema: {
      type: 'object',
      properties: {
        format: shapeRef('TextFormat'),
        verbosity: { type: 'string', enum: ['low', 'medium', 'high'] },
      },
    },
    description: 'Structured output (`format`) and `verbosity`',
    error: 'invalid_request',
    parse: parseText,
  }),
  customField('reasoning', {
    schema: {
      type: 'object',
      properties: {
        effort: { type: 'string', enum: ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'] },
        summary: { type: 'string', enum: ['auto', 'concise', 'detailed'] },
      },
    },
    description: '`effort` and `summary` (`generate_summary` is read as `summary`)',
    error: 'invalid_request',
    parse: parseReasoning,
  }),
  customField('metadata', {
    schema: {
      type: 'object',
      maxProperties: METADATA_MAX_KEYS,
      propertyNames: { maxLength: METADATA_MAX_KEY_LENGTH },
      additionalProperties: { type: 'string', maxLength: METADATA_MAX_VALUE_LENGTH },
    },
    description: `Stored and echoed; keys of at most ${METADATA_MAX_KEY_LENGTH} characters, string values of at most ${METADATA_MAX_VALUE_LENGTH}`,
    error: 'invalid_request',
    parse: parseMetadata,
  }),
  stringField('user', { maxLength: 256, description: 'Sent upstream as is' }),
  stringField('safety_identifier', { maxLength: IDENTIFIER_MAX_LENGTH, description: 'Sent upstream as is' }),
  stringField('prompt_cache_key', { maxLength: IDENTIFIER_MAX_LENGTH, description: 'Sent upstream as is' }),
  enumField('prompt_cache_retention', ['in_memory', '24h'], null, { description: 'Sent upstream as is' }),
  enumField('service_tier', ['auto', 'default', 'flex', 'scale', 'priority'], null, {
    description: 'Sent upstream as is',
  }),
  booleanField('store', true, { description: '`false`: run the turn without keeping anything' }),
  enumField('truncation', ['auto', 'disabled'], 'disabled', {
    description: "`auto`: leave out the oldest turns to fit the assistant's `contextWindow`",
  }),
  customField('tools', {
    schema: {
      type: 'array',
      maxItems: MAX_TOOLS,
      items: { oneOf: [shapeRef('FunctionTool'), shapeRef('FileSearchTool'), shapeRef('WebSearchTool')] },
    },
    description:
      'Client-side function tools, names unique; at most one `file_search` tool and one offline `web_search` tool (`external_web_access: false`); other server-side tools are configured on the assistant',
    error: 'invalid_request',
    parse: (raw: unknown) => {
      const { fileSearch, rest } = splitFileSearchTool(raw);
      const { webSearch, rest: functions } = splitWebSearchTool(rest);
      return { functions: parseTools(functions), fileSearch, webSearch };
    },
  }),
  customField('input', {
    required: true,
    schema: INPUT_SCHEMA,
    description: 'With `previous_response_id`, send only the new items (not the earlier messages)',
    error: ['invalid_input_type', 'missing_call_id', 'invalid_request'],
    parse: parseInput,
  }),
] as const;
