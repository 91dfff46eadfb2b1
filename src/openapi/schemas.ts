import { ERROR_CATALOGUE } from '../common/errors/error-catalogue.js';
import { COMPACT_RESPONSE_FIELDS } from '../responses/request-schema/compact-response.fields.js';
import { CREATE_RESPONSE_FIELDS } from '../responses/request-schema/create-response.fields.js';
import { requestBodySchema } from '../common/request-schema/request-schema.js';
import { constant, nullable, object, objectWithOptional, ref } from '../common/request-schema/json-schema.js';
import { REQUEST_SHAPES } from '../responses/request-schema/request-shapes.js';
import { MAX_BULK_CLAIMS, MAX_CLAIM_VALUE_BYTES } from '../claims/dto/claim-input.dto.js';
import { MAX_USER_ID_LENGTH } from '../common/http/request-params.js';
import { MEMORY_PAGE } from '../memory/dto/memory-query.dto.js';
import { MAX_ITEMS_PER_REQUEST, MAX_METADATA_KEYS } from '../conversations/dto/conversation-limits.js';

/**
 * The JSON Schemas of the OpenAPI document (components.schemas). The Responses request bodies and
 * their nested shapes (input items, tools, text format) come from their one declarative schema
 * (src/responses/request-schema/); the rest are written by hand like the parsers and views they
 * describe. Each group names the file whose parser or view
 * it mirrors: change them together. Limits are imported from those files so the numbers cannot
 * disagree.
 */
export type JsonSchema = { [keyword: string]: unknown };

export { nullable, ref };
/** A JSON response (the operation tables' `responses`); `extra` goes between the description and the content. */
export const json = (schema: JsonSchema, description: string, extra: JsonSchema = {}): JsonSchema => ({
  description,
  ...extra,
  content: { 'application/json': { schema } },
});
/** A string path parameter, declared inline in the operation. */
export const pathParam = (name: string, description: string): JsonSchema => ({
  name,
  in: 'path',
  required: true,
  description,
  schema: { type: 'string' },
});
/** A required JSON request body. */
export const jsonBody = (schema: JsonSchema, description?: string): JsonSchema => ({
  required: true,
  ...(description ? { description } : {}),
  content: { 'application/json': { schema } },
});
const dateTime = (description: string): JsonSchema => ({ type: 'string', format: 'date-time', description });

const UUID_PATTERN = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const ITEM_ID_PATTERN = (prefix: string) => `^${prefix}_[0-9a-f]{32}$`;
const assistantShown: JsonSchema = {
  type: 'string',
  pattern: `^asst_${UUID_PATTERN}$`,
  description: 'Assistant id, always shown as `asst_<uuid>`',
};

/** Error types, taken from the catalogue's values so they cannot drift. */
const ERROR_TYPES = [...new Set(Object.values(ERROR_CATALOGUE).map((entry) => entry.type))];

/** src/common/errors/error-catalogue.ts: the one envelope of every error. */
const errorSchemas: Record<string, JsonSchema> = {
  ErrorObject: object({
    type: { type: 'string', enum: ERROR_TYPES },
    code: {
      type: 'string',
      enum: Object.keys(ERROR_CATALOGUE),
      description: 'Machine-readable; the HTTP status and `type` follow from it (see docs/api.md)',
    },
    message: { type: 'string', description: 'For humans; never contains stack traces, SQL or secrets' },
  }),
  ErrorEnvelope: object(
    { error: ref('ErrorObject') },
    { description: 'Every error, on every route: `{error: {type, code, message}}`' },
  ),
};

/** src/responses/streaming/response-recorder.ts (`OutputItem`) and responses.service.ts (`ResponseObject`). */
const responseSchemas: Record<string, JsonSchema> = {
  ItemStatus: { type: 'string', enum: ['in_progress', 'completed', 'incomplete'] },
  OutputTextPart: object({
    type: constant('output_text'),
    text: { type: 'string' },
    annotations: {
      type: 'array',
      items: ref('FileCitation'),
      description:
        'The files whose file_search passages this text names or quotes (docs/knowledge.md, "Citations"); else empty',
    },
    logprobs: {
      type: 'array',
      items: ref('TokenLogprob'),
      description: 'Filled when `include` has `message.output_text.logprobs`; else empty',
    },
  }),
  FileCitation: object({
    type: constant('file_citation'),
    index: {
      type: 'integer',
      description: 'The character offset in the text just after the place where it cites the file',
    },
    file_id: { type: 'string' },
    filename: { type: 'string' },
  }),
  TokenLogprob: object({
    token: { type: 'string' },
    logprob: { type: 'number' },
    bytes: { type: 'array', items: { type: 'integer' } },
    top_logprobs: {
      type: 'array',
      items: object({
        token: { type: 'string' },
        logprob: { type: 'number' },
        bytes: { type: 'array', items: { type: 'integer' } },
      }),
    },
  }),
  ReasoningItem: object(
    {
      type: constant('reasoning'),
      id: { type: 'string', pattern: ITEM_ID_PATTERN('rs') },
      status: ref('ItemStatus'),
      summary: { type: 'array', items: {}, maxItems: 0, description: 'Always empty: no summaries are made' },
      content: {
        type: 'array',
        items: object({ type: constant('reasoning_text'), text: { type: 'string' } }),
        description: 'The reasoning text the upstream streamed (`reasoning_content`/`reasoning`)',
      },
    },
    { description: 'What a reasoning model thought before it answered; kept in the stored output.' },
  ),
  OutputMessage: object(
    {
      type: constant('message'),
      id: { type: 'string', pattern: ITEM_ID_PATTERN('msg') },
      status: ref('ItemStatus'),
      role: constant('assistant'),
      content: { type: 'array', items: ref('OutputTextPart') },
    },
    { description: "The assistant's text. `content` is empty in `response.output_item.added`." },
  ),
  FunctionCallItem: object(
    {
      type: constant('function_call'),
      id: { type: 'string', pattern: ITEM_ID_PATTERN('fc') },
      call_id: { type: 'string', description: 'Answer it with a `function_call_output` input item' },
      name: { type: 'string', description: "One of the request's function tools" },
      arguments: { type: 'string', description: 'JSON-encoded arguments' },
      status: ref('ItemStatus'),
    },
    { description: 'A call of a client-side function tool; the response ends with `requires_action`.' },
  ),
  HandoverItem: object(
    {
      type: constant('handover'),
      id: { type: 'string', pattern: ITEM_ID_PATTERN('hov') },
      from_specialist: { type: 'string', description: 'Agent handing over; the generic path is `generic`' },
      to_specialist: { type: 'string' },
      reason: { type: 'string' },
    },
    { description: 'The turn continues with another agent of the assistant.' },
  ),
  OAuthRequiredItem: object(
    {
      type: constant('oauth_required'),
      id: { type: 'string', pattern: ITEM_ID_PATTERN('oar') },
      plugin_id: { type: 'string' },
      plugin_name: { type: 'string' },
      provider_id: { type: 'string', description: 'Key to use in `x-user-tokens` once the user signed in' },
      required_scopes: { type: 'array', items: { type: 'string' } },
      auth_url: { type: 'string', format: 'uri' },
    },
    { description: "A tool needed the user's OAuth token for this provider and got none." },
  ),
  WebSearchCallItem: object(
    {
      type: constant('web_search_call'),
      id: { type: 'string', pattern: ITEM_ID_PATTERN('ws') },
      status: { type: 'string', enum: ['in_progress', 'searching', 'completed', 'incomplete'] },
      action: objectWithOptional(
        {
          type: constant('search'),
          query: { type: 'string' },
          sources: {
            type: 'array',
            description: "The results' URLs; only with include `web_search_call.action.sources`",
            items: object({ type: constant('url'), url: { type: 'string' } }),
          },
        },
        ['sources'],
      ),
    },
    { description: 'A server-side web search made during the turn (live, or offline from the cache).' },
  ),
  FileSearchCallItem: object(
    {
      type: constant('file_search_call'),
      id: { type: 'string', pattern: ITEM_ID_PATTERN('fs') },
      status: { type: 'string', enum: ['in_progress', 'searching', 'completed', 'incomplete', 'failed'] },
      queries: { type: 'array', items: { type: 'string' } },
      results: {
        type: ['array', 'null'],
        description: 'Null unless the request has include `file_search_call.results`',
        items: object({
          file_id: { type: 'string' },
          filename: { type: 'string' },
          score: { type: 'number' },
          text: { type: 'string' },
          attributes: { type: 'object' },
          vector_store_id: { type: 'string', description: 'The store (`vs_<uuid>`) the passage came from' },
        }),
      },
    },
    { description: "A search of the request's vector stores made during the turn (docs/knowledge.md)." },
  ),
  OutputItem: {
    oneOf: [
      ref('OutputMessage'),
      ref('ReasoningItem'),
      ref('FunctionCallItem'),
      ref('HandoverItem'),
      ref('OAuthRequiredItem'),
      ref('WebSearchCallItem'),
      ref('FileSearchCallItem'),
    ],
    discriminator: {
      propertyName: 'type',
      mapping: {
        message: '#/components/schemas/OutputMessage',
        reasoning: '#/components/schemas/ReasoningItem',
        function_call: '#/components/schemas/FunctionCallItem',
        handover: '#/components/schemas/HandoverItem',
        oauth_required: '#/components/schemas/OAuthRequiredItem',
        web_search_call: '#/components/schemas/WebSearchCallItem',
        file_search_call: '#/components/schemas/FileSearchCallItem',
      },
    },
  },
  Usage: object({
    input_tokens: { type: 'integer', minimum: 0 },
    input_tokens_details: object({ cached_tokens: { type: 'integer', minimum: 0 } }),
    output_tokens: { type: 'integer', minimum: 0, description: 'Reasoning tokens included' },
    output_tokens_details: object({ reasoning_tokens: { type: 'integer', minimum: 0 } }),
    total_tokens: { type: 'integer', minimum: 0 },
  }),
  Response: object(
    {
      id: { type: 'string', pattern: `^resp_${UUID_PATTERN}$`, description: 'Use as `previous_response_id`' },
      object: constant('response'),
      created_at: { type: 'integer', description: 'Unix time in seconds' },
      completed_at: nullable({ type: 'integer', description: 'Unix time in seconds, once `completed`' }),
      status: {
        type: 'string',
        enum: ['queued', 'in_progress', 'completed', 'requires_action', 'incomplete', 'failed', 'cancelled'],
        description:
          '`queued` and `in_progress` while the turn runs (a background response polled, or any response read ' +
          'mid-turn, and in `response.created`/`response.in_progress`); `incomplete` when `max_output_tokens` cut ' +
          "the reply or the provider's content filter stopped it (`incomplete_details.reason`); `failed` for a " +
          'turn that broke off or whose replica stopped; `cancelled` for a cancelled ' +
          'background response',
      },
      incomplete_details: nullable(
        object({ reason: { type: 'string', enum: ['max_output_tokens', 'content_filter'] } }),
      ),
      model: {
        type: 'string',
        description:
          "The assistant, `asst_<uuid>`; with the assistant's `model.failover.reportModel: upstream`, the " +
          "upstream model that answered (a fallback after a failover; before any answered, the assistant's own " +
          "model). Send the assistant id, not this, as the next request's `model`",
      },
      previous_response_id: nullable({ type: 'string', pattern: `^resp_${UUID_PATTERN}$` }),
      instructions: nullable({ type: 'string', description: "This turn's request `instructions`" }),
      output: {
        type: 'array',
        items: ref('OutputItem'),
        description: 'Items in the order they were produced',
      },
      output_text: { type: 'string', description: 'The text of every `message` item, concatenated' },
      error: nullable(ref('ErrorObject')),
      tools: { type: 'array', items: {}, description: "The request's function tools, `strict` filled in" },
      tool_choice: { description: 'As sent (default `auto`)' },
      truncation: { type: 'string', enum: ['auto', 'disabled'] },
      parallel_tool_calls: { type: 'boolean' },
      text: object({ format: ref('TextFormat') }),
      top_p: { type: 'number' },
      presence_penalty: { type: 'number' },
      frequency_penalty: { type: 'number' },
      top_logprobs: { type: 'integer' },
      temperature: { type: 'number', description: "As sent, else the assistant's default, else 1" },
      reasoning: nullable(
        object({ effort: nullable({ type: 'string' }), summary: nullable({ type: 'string' }) }),
      ),
      user: nullable({ type: 'string' }),
      usage: nullable(ref('Usage')),
      max_output_tokens: nullable({ type: 'integer' }),
      max_tool_calls: nullable({ type: 'integer' }),
      store: { type: 'boolean' },
      background: { type: 'boolean', description: 'Created with `background: true`' },
      service_tier: { type: 'string' },
      metadata: { type: 'object', additionalProperties: { type: 'string' } },
      safety_identifier: nullable({ type: 'string' }),
      prompt_cache_key: nullable({ type: 'string' }),
      conversation: nullable(
        object({ id: { type: 'string', format: 'uuid', description: 'Chat-history conversation id' } }),
      ),
    },
    {
      description:
        "The Open Responses `ResponseResource`, plus the contract's `output_text` and `conversation` (null for `store: false` turns that started no conversation). GET returns the stored copy byte for byte.",
    },
  ),
};

/** The request bodies, derived from their one declarative schema with its nested shapes (src/responses/request-schema/). */
const requestSchemas: Record<string, JsonSchema> = {
  ...REQUEST_SHAPES,
  CreateResponseRequest: requestBodySchema(
    CREATE_RESPONSE_FIELDS,
    'Every field is honoured or refused by name (docs/api.md, "Request parameters"); an unknown field is 400 `invalid_request`.',
  ),
};

const streamEvent = (type: string, properties: Record<string, JsonSchema>, description: string): JsonSchema =>
  object(
    {
      type: constant(type),
      sequence_number: { type: 'integer', minimum: 0, description: '0, 1, 2… without gaps within a stream' },
      ...properties,
    },
    { description },
  );
/** The events that carry the whole Response: its lifecycle (created, in progress, the ends). */
const responseEvent = (type: string, description: string): JsonSchema =>
  streamEvent(type, { response: ref('Response') }, description);
const outputIndex: JsonSchema = {
  type: 'integer',
  minimum: 0,
  description: 'Position of the item in `output`',
};
const itemIdRef: JsonSchema = { type: 'string', description: 'The `id` of the item at `output_index`' };
const contentIndex: JsonSchema = { type: 'integer', minimum: 0 };
const logprobs: JsonSchema = { type: 'array', items: ref('TokenLogprob') };

/** The events ResponseRecorder and ResponsesService.stream emit, in the order of spec 6.3. */
const STREAM_EVENTS: Record<string, JsonSchema> = {
  ResponseCreatedEvent: responseEvent('response.created', 'Always first; `response.status` is `in_progress`'),
  ResponseInProgressEvent: responseEvent(
    'response.in_progress',
    'Right after `response.created`, with the same Response',
  ),
  ResponseStatusEvent: streamEvent(
    'response.status',
    {
      code: { type: 'string', description: '`tool_calling`: server tools run in this iteration' },
      message: { type: 'string' },
      metadata: {
        type: 'object',
        properties: { tools: { type: 'array', items: { type: 'string' } } },
        description: 'With `tool_calling`: `tools`, the server tools called',
      },
    },
    'Not sent to the official SDKs (`x-stainless-lang`) unless `x-switchboard-events: all`',
  ),
  OutputItemAddedEvent: streamEvent(
    'response.output_item.added',
    { output_index: outputIndex, item: ref('OutputItem') },
    'A new output item (a message with empty `content`, a function call, handover, oauth_required, web search)',
  ),
  ContentPartAddedEvent: streamEvent(
    'response.content_part.added',
    {
      item_id: itemIdRef,
      output_index: outputIndex,
      content_index: contentIndex,
      part: {
        oneOf: [
          ref('OutputTextPart'),
          object({ type: constant('reasoning_text'), text: { type: 'string' } }),
        ],
      },
    },
    'A text (or reasoning) part opens, just before its first delta',
  ),
  OutputTextDeltaEvent: streamEvent(
    'response.output_text.delta',
    {
      item_id: itemIdRef,
      output_index: outputIndex,
      content_index: contentIndex,
      delta: { type: 'string' },
      logprobs,
    },
    'A text fragment; the deltas concatenated are the text',
  ),
  OutputTextDoneEvent: streamEvent(
    'response.output_text.done',
    {
      item_id: itemIdRef,
      output_index: outputIndex,
      content_index: contentIndex,
      text: { type: 'string' },
      logprobs,
    },
    'The whole text of the part, once after its deltas',
  ),
  ReasoningDeltaEvent: streamEvent(
    'response.reasoning.delta',
    { item_id: itemIdRef, output_index: outputIndex, content_index: contentIndex, delta: { type: 'string' } },
    'A fragment of reasoning text; `response.reasoning_text.delta` for the official SDKs (`x-stainless-lang`)',
  ),
  ReasoningDoneEvent: streamEvent(
    'response.reasoning.done',
    { item_id: itemIdRef, output_index: outputIndex, content_index: contentIndex, text: { type: 'string' } },
    'The whole reasoning text; `response.reasoning_text.done` for the official SDKs',
  ),
  ContentPartDoneEvent: streamEvent(
    'response.content_part.done',
    { item_id: itemIdRef, output_index: outputIndex, content_index: contentIndex, part: {} },
    'A reasoning part is complete',
  ),
  FunctionCallArgumentsDeltaEvent: streamEvent(
    'response.function_call_arguments.delta',
    { item_id: itemIdRef, output_index: outputIndex, delta: { type: 'string' } },
    'A fragment of the JSON arguments of a function call',
  ),
  FunctionCallArgumentsDoneEvent: streamEvent(
    'response.function_call_arguments.done',
    {
      item_id: itemIdRef,
      output_index: outputIndex,
      name: { type: 'string' },
      call_id: { type: 'string' },
      arguments: { type: 'string', description: 'JSON-encoded' },
    },
    'Arguments complete: run the function, then send its `function_call_output`',
  ),
  OutputItemDoneEvent: streamEvent(
    'response.output_item.done',
    { output_index: outputIndex, item: ref('OutputItem') },
    'The item is complete',
  ),
  WebSearchCallInProgressEvent: streamEvent(
    'response.web_search_call.in_progress',
    { item_id: itemIdRef, output_index: outputIndex, call_id: { type: 'string' } },
    'A web search started',
  ),
  WebSearchCallSearchingEvent: streamEvent(
    'response.web_search_call.searching',
    { item_id: itemIdRef, output_index: outputIndex, call_id: { type: 'string' }, query: { type: 'string' } },
    'The query was submitted',
  ),
  WebSearchCallCompletedEvent: streamEvent(
    'response.web_search_call.completed',
    {
      item_id: itemIdRef,
      output_index: outputIndex,
      call_id: { type: 'string' },
      results_count: { type: 'integer', minimum: 0 },
    },
    'Results are available',
  ),
  ResponseCompletedEvent: responseEvent(
    'response.completed',
    'Last event before `data: [DONE]`; the same object a later GET /v1/responses/{id} returns. ' +
      '`response.status` is `completed` or `requires_action`.',
  ),
  ResponseIncompleteEvent: responseEvent(
    'response.incomplete',
    'Instead of `response.completed` when `max_output_tokens` cut the reply; then `data: [DONE]`',
  ),
  ResponseFailedEvent: responseEvent(
    'response.failed',
    'A failure after the stream started, with the stored failed Response; `response.error` follows',
  ),
  ResponseErrorEvent: streamEvent(
    'response.error',
    { error: ref('ErrorObject') },
    'A failure after the stream started; the stream closes without `[DONE]`',
  ),
};

const eventTypeOf = (schema: JsonSchema): string =>
  ((schema.properties as Record<string, JsonSchema>).type.const as string) ?? '';

const streamSchemas: Record<string, JsonSchema> = {
  ...STREAM_EVENTS,
  ResponseStreamEvent: {
    oneOf: Object.keys(STREAM_EVENTS).map(ref),
    discriminator: {
      propertyName: 'type',
      mapping: Object.fromEntries(
        Object.entries(STREAM_EVENTS).map(([name, schema]) => [
          eventTypeOf(schema),
          `#/components/schemas/${name}`,
        ]),
      ),
    },
    description: 'The JSON in the `data:` line of each event; its `type` repeats the `event:` line',
  },
};

/** The event types in stream order (spec 6.2), for descriptions. */
export const STREAM_EVENT_TYPES: readonly string[] = Object.values(STREAM_EVENTS).map(eventTypeOf);

/** The Conversations API of src/conversations (OpenAI's shapes). */
const metadataSchema: JsonSchema = {
  type: 'object',
  maxProperties: MAX_METADATA_KEYS,
  additionalProperties: { type: 'string', maxLength: 512 },
  description: 'At most 16 pairs; keys up to 64 characters, string values up to 512',
};
const conversationApiSchemas: Record<string, JsonSchema> = {
  ConversationObject: object({
    id: { type: 'string', pattern: `^conv_${UUID_PATTERN}$`, description: 'The chat-history id, prefixed' },
    object: constant('conversation'),
    created_at: { type: 'integer', description: 'Unix seconds' },
    metadata: metadataSchema,
  }),
  ConversationDeleted: object({
    id: { type: 'string', pattern: `^conv_${UUID_PATTERN}$` },
    object: constant('conversation.deleted'),
    deleted: { type: 'boolean', const: true },
  }),
  ConversationItem: {
    oneOf: [ref('OutputItem'), object({ type: { type: 'string' }, id: { type: 'string' } })],
    description:
      'An input item (message with `input_text` or `output_text` parts, `function_call`, `function_call_output`, ' +
      'each with an `id` and `status`) or an output item as its response showed it',
  },
  ConversationItemList: object({
    object: constant('list'),
    data: { type: 'array', items: ref('ConversationItem') },
    first_id: nullable({ type: 'string' }),
    last_id: nullable({ type: 'string' }),
    has_more: { type: 'boolean' },
  }),
  CreateConversationRequest: {
    type: 'object',
    properties: {
      items: nullable({ type: 'array', maxItems: MAX_ITEMS_PER_REQUEST, items: ref('InputItem') }),
      metadata: nullable(metadataSchema),
    },
  },
  UpdateConversationRequest: {
    type: 'object',
    required: ['metadata'],
    properties: { metadata: nullable(metadataSchema) },
  },
  CreateConversationItemsRequest: {
    type: 'object',
    required: ['items'],
    properties: {
      items: { type: 'array', minItems: 1, maxItems: MAX_ITEMS_PER_REQUEST, items: ref('InputItem') },
    },
  },
};

/** The chat-history views of src/conversations (spec 2.5, 2.6). */
const historySchemas: Record<string, JsonSchema> = {
  Conversation: object({
    id: { type: 'string', format: 'uuid', description: 'The `conversation.id` of its responses' },
    title: { type: 'string', description: 'The first user message, cut at a word boundary (80 characters)' },
    isActive: { type: 'boolean', description: 'False once idle longer than `CONVERSATION_IDLE_HOURS`' },
    createdAt: dateTime('Start of the conversation'),
    updatedAt: dateTime('Last message'),
    assistantId: nullable({
      ...assistantShown,
      description: 'Null until an assistant answers in a conversation created with POST /v1/conversations',
    }),
  }),
  Message: object({
    id: { type: 'string', pattern: `^msg_${UUID_PATTERN}$` },
    role: { type: 'string', enum: ['user', 'assistant'] },
    content: { type: 'string' },
    createdAt: dateTime('When the message was stored'),
  }),
};

const userIdSchema: JsonSchema = { type: 'string', minLength: 1, maxLength: MAX_USER_ID_LENGTH };
const claimKeySchema: JsonSchema = {
  type: 'string',
  pattern: '^[A-Za-z0-9._:-]{1,128}$',
  description: '1 to 128 letters, digits, `.`, `_`, `-`, `:`',
};
const claimValueSchema: JsonSchema = {
  description: `Any JSON value, \`null\` included; at most ${MAX_CLAIM_VALUE_BYTES} bytes serialized (else 422 \`claim_value_too_large\`)`,
};

/** src/claims/dto/claim-input.dto.ts and `ClaimRecord` in src/claims/claims.controller.ts. */
const claimSchemas: Record<string, JsonSchema> = {
  ClaimInput: object(
    { userId: userIdSchema, claimKey: claimKeySchema, claimValue: claimValueSchema },
    { description: 'Creates or replaces the claim (userId, claimKey)' },
  ),
  BulkClaimsRequest: object({
    claims: {
      type: 'array',
      maxItems: MAX_BULK_CLAIMS,
      items: ref('ClaimInput'),
      description: `At most ${MAX_BULK_CLAIMS} (else 422 \`bulk_limit_exceeded\`); applied all or nothing`,
    },
  }),
  ClaimRecord: object({
    userId: userIdSchema,
    claimKey: claimKeySchema,
    claimValue: claimValueSchema,
    createdAt: dateTime('First written'),
    updatedAt: dateTime('Last written'),
  }),
};

/** `MemoryItemView` / `MemoryListView` in src/memory/memory.controller.ts. */
const memorySchemas: Record<string, JsonSchema> = {
  MemoryItem: object({
    id: { type: 'string', pattern: `^mem_${UUID_PATTERN}$` },
    assistantId: assistantShown,
    content: { type: 'string', maxLength: 2000 },
    createdAt: dateTime('When the assistant saved it'),
  }),
  MemoryList: object({
    object: constant('list'),
    data: {
      type: 'array',
      items: ref('MemoryItem'),
      maxItems: MEMORY_PAGE.max,
      description: `Newest first, \`limit\` per page (default ${MEMORY_PAGE.default})`,
    },
    hasMore: { type: 'boolean' },
    nextCursor: nullable({ type: 'string', description: 'Pass as `after` for the next page' }),
    optedOut: { type: 'boolean', description: 'Whether memory is off for this user (and `assistant_id`)' },
  }),
  MemoryDeleted: object({ deleted: { type: 'integer', minimum: 0, description: 'Items erased' } }),
  MemoryOptOutState: object({
    optedOut: { type: 'boolean', description: 'The state after the change, for the scope asked about' },
    assistantId: nullable(assistantShown),
  }),
};

/** src/mcp-gateway (RFC 9728 metadata, the MCP JSON-RPC messages) and src/health. */
const platformSchemas: Record<string, JsonSchema> = {
  ProtectedResourceMetadata: object({
    resource: { type: 'string', format: 'uri', description: 'The gateway URL on the admin origin' },
    authorization_servers: { type: 'array', items: { type: 'string', format: 'uri' } },
    scopes_supported: { type: 'array', items: { type: 'string' } },
    bearer_methods_supported: { type: 'array', items: constant('header') },
    resource_name: { type: 'string' },
  }),
  JsonRpcMessage: {
    type: 'object',
    required: ['jsonrpc'],
    properties: {
      jsonrpc: constant('2.0'),
      id: { type: ['string', 'integer'], description: 'Absent for notifications' },
      method: { type: 'string', examples: ['initialize', 'tools/list', 'tools/call'] },
      params: { type: 'object' },
      result: { type: 'object' },
      error: ref('JsonRpcError'),
    },
    description: 'An MCP message (Streamable HTTP transport, protocol revisions up to 2025-11-25)',
  },
  JsonRpcError: {
    type: 'object',
    required: ['code', 'message'],
    properties: { code: { type: 'integer' }, message: { type: 'string' }, data: {} },
  },
  Liveness: object({ status: constant('ok') }),
  Readiness: object({
    status: { type: 'string', enum: ['ready', 'not_ready'] },
    checks: object({
      accepting: { type: 'boolean', description: 'False once shutdown began' },
      database: { type: 'boolean' },
      migrations: { type: 'boolean', description: 'Every migration of this version is applied' },
    }),
  }),
};

/** src/responses/input-item-view.ts and responses.service.ts (`delete`). */
const responseManagementSchemas: Record<string, JsonSchema> = {
  InputItemList: object({
    object: constant('list'),
    data: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'type'],
        properties: {
          id: {
            type: 'string',
            description: 'The id the client sent with the item, or one derived from the response',
          },
          type: {
            type: 'string',
            enum: ['message', 'function_call', 'function_call_output', 'reasoning', 'compaction'],
          },
        },
        description:
          'OpenAI item shapes: `message` (role, status, content parts as sent), `function_call`, `function_call_output`.',
      },
    },
    first_id: nullable({ type: 'string' }),
    last_id: nullable({ type: 'string', description: 'Pass as `after` for the next page' }),
    has_more: { type: 'boolean' },
  }),
  CompactResponseRequest: requestBodySchema(COMPACT_RESPONSE_FIELDS, 'POST /v1/responses/compact'),
  CompactionResponse: object({
    id: { type: 'string', description: 'Identifies this compaction only; nothing is stored' },
    object: constant('response.compaction'),
    output: {
      type: 'array',
      items: { oneOf: [ref('InputMessage'), ref('CompactionItem')] },
      description: 'The newest user message (verbatim), then one compaction item: send both as `input`',
    },
    created_at: { type: 'integer', description: 'Unix seconds' },
    usage: ref('Usage'),
  }),
  ResponseDeleted: object({
    id: { type: 'string', pattern: `^resp_${UUID_PATTERN}$` },
    object: constant('response'),
    deleted: { type: 'boolean', const: true },
  }),
};

export const SCHEMAS: Record<string, JsonSchema> = {
  ...errorSchemas,
  ...responseSchemas,
  ...requestSchemas,
  ...responseManagementSchemas,
  ...streamSchemas,
  ...historySchemas,
  ...conversationApiSchemas,
  ...claimSchemas,
  ...memorySchemas,
  ...platformSchemas,
};
