import { ERROR_CATALOGUE } from '../common/errors/error-catalogue.js';
import { MAX_TOOLS } from '../responses/dto/create-response.dto.js';
import { MAX_BULK_CLAIMS, MAX_CLAIM_VALUE_BYTES } from '../claims/dto/claim-input.dto.js';
import { MAX_USER_ID_LENGTH } from '../common/http/request-params.js';
import { MEMORY_PAGE } from '../memory/dto/memory-query.dto.js';

/**
 * The JSON Schemas of the OpenAPI document (components.schemas), written by hand like the request
 * parsers they describe. Each group names the file whose parser or view it mirrors: change them
 * together. Limits are imported from those files so the numbers cannot disagree.
 */
export type JsonSchema = { [keyword: string]: unknown };

export const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const nullable = (schema: JsonSchema): JsonSchema => ({ oneOf: [schema, { type: 'null' }] });
const constant = (value: string): JsonSchema => ({ type: 'string', const: value });
const dateTime = (description: string): JsonSchema => ({ type: 'string', format: 'date-time', description });
const object = (properties: Record<string, JsonSchema>, extra: JsonSchema = {}): JsonSchema => ({
  type: 'object',
  required: Object.keys(properties),
  properties,
  ...extra,
});

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
    annotations: { type: 'array', items: {}, maxItems: 0, description: 'Always empty' },
  }),
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
      action: object({ type: constant('search'), query: { type: 'string' } }),
    },
    { description: 'A server-side web search made during the turn.' },
  ),
  OutputItem: {
    oneOf: [
      ref('OutputMessage'),
      ref('FunctionCallItem'),
      ref('HandoverItem'),
      ref('OAuthRequiredItem'),
      ref('WebSearchCallItem'),
    ],
    discriminator: {
      propertyName: 'type',
      mapping: {
        message: '#/components/schemas/OutputMessage',
        function_call: '#/components/schemas/FunctionCallItem',
        handover: '#/components/schemas/HandoverItem',
        oauth_required: '#/components/schemas/OAuthRequiredItem',
        web_search_call: '#/components/schemas/WebSearchCallItem',
      },
    },
  },
  Usage: object({
    input_tokens: { type: 'integer', minimum: 0 },
    output_tokens: { type: 'integer', minimum: 0 },
    total_tokens: { type: 'integer', minimum: 0 },
  }),
  Response: object(
    {
      id: { type: 'string', pattern: `^resp_${UUID_PATTERN}$`, description: 'Use as `previous_response_id`' },
      object: constant('response'),
      created_at: { type: 'integer', description: 'Unix time in seconds' },
      status: {
        type: 'string',
        enum: ['queued', 'in_progress', 'completed', 'requires_action', 'failed', 'cancelled'],
        description:
          '`queued` and `in_progress` while the turn runs (a background response polled, or any response read ' +
          'mid-turn); `failed` for a turn that broke off or whose replica stopped; `cancelled` for a cancelled ' +
          'background response',
      },
      model: assistantShown,
      output: {
        type: 'array',
        items: ref('OutputItem'),
        description: 'Items in the order they were produced',
      },
      output_text: { type: 'string', description: 'The text of every `message` item, concatenated' },
      previous_response_id: nullable({ type: 'string', pattern: `^resp_${UUID_PATTERN}$` }),
      instructions: nullable({ type: 'string', description: "This turn's request `instructions`" }),
      conversation: object({
        id: { type: 'string', format: 'uuid', description: 'Chat-history conversation id' },
      }),
      usage: nullable(ref('Usage')),
      error: nullable(ref('ErrorObject')),
      incomplete_details: { type: 'null' },
      metadata: { type: 'object', additionalProperties: { type: 'string' } },
      parallel_tool_calls: { type: 'boolean' },
      tool_choice: constant('auto'),
      tools: { type: 'array', items: {} },
      background: { type: 'boolean', description: 'Created with `background: true`' },
    },
    { description: 'Spec 2.1, plus the fields the official SDK types expect.' },
  ),
};

/** src/responses/dto/create-response.dto.ts (`parseCreateResponse`). */
const requestSchemas: Record<string, JsonSchema> = {
  InputTextPart: object({
    type: { type: 'string', enum: ['input_text', 'output_text', 'text'] },
    text: { type: 'string' },
  }),
  InputMessage: {
    type: 'object',
    required: ['role', 'content'],
    properties: {
      type: constant('message'),
      role: { type: 'string', enum: ['user', 'assistant', 'system', 'developer'] },
      content: {
        oneOf: [{ type: 'string' }, { type: 'array', items: ref('InputTextPart') }],
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
  InputItem: {
    oneOf: [ref('InputMessage'), ref('FunctionCallOutputInput'), ref('FunctionCallInput')],
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
  CreateResponseRequest: {
    type: 'object',
    required: ['model', 'input'],
    properties: {
      model: {
        type: 'string',
        description: 'The assistant: `asst_<uuid>` or the bare UUID',
        examples: ['asst_8eee17c3-5c44-4b4e-9d0e-0c1f0f3b9a11'],
      },
      input: {
        oneOf: [
          { type: 'string', description: 'One user message' },
          { type: 'array', minItems: 1, items: ref('InputItem') },
        ],
        description: 'With `previous_response_id`, send only the new items (not the earlier messages)',
      },
      previous_response_id: nullable({
        type: 'string',
        description: 'Continue the thread of this response; omit to start a new conversation',
      }),
      stream: nullable({ type: 'boolean', description: '`true` answers with `text/event-stream`' }),
      background: nullable({
        type: 'boolean',
        description:
          '`true` runs the turn server-side whatever the client does: the reply is the Response in status ' +
          '`queued` (or, with `stream`, a stream that can be resumed with `GET /v1/responses/{id}?stream=true`)',
      }),
      tools: nullable({ type: 'array', maxItems: MAX_TOOLS, items: ref('FunctionTool') }),
      instructions: nullable({ type: 'string', description: 'Added for this turn only' }),
    },
    description: 'Other fields the SDKs send (temperature, metadata…) are accepted and ignored.',
  },
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
const outputIndex: JsonSchema = {
  type: 'integer',
  minimum: 0,
  description: 'Position of the item in `output`',
};
const itemIdRef: JsonSchema = { type: 'string', description: 'The `id` of the item at `output_index`' };
const contentIndex: JsonSchema = { type: 'integer', minimum: 0 };
const logprobs: JsonSchema = { type: 'array', items: {}, maxItems: 0 };

/** The events ResponseRecorder and ResponsesService.stream emit, in the order of spec 6.3. */
const STREAM_EVENTS: Record<string, JsonSchema> = {
  ResponseCreatedEvent: streamEvent(
    'response.created',
    { response: ref('Response') },
    'Always first; `response.status` is `in_progress`',
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
      part: ref('OutputTextPart'),
    },
    'A text part opens, just before its first delta',
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
  ResponseCompletedEvent: streamEvent(
    'response.completed',
    { response: ref('Response') },
    'Last event before `data: [DONE]`; the same object a later GET /v1/responses/{id} returns. ' +
      '`response.status` is `completed` or `requires_action`.',
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

/** The chat-history views of src/conversations (spec 2.5, 2.6). */
const historySchemas: Record<string, JsonSchema> = {
  Conversation: object({
    id: { type: 'string', format: 'uuid', description: 'The `conversation.id` of its responses' },
    title: { type: 'string', description: 'The first user message, cut at a word boundary (80 characters)' },
    isActive: { type: 'boolean', description: 'False once idle longer than `CONVERSATION_IDLE_HOURS`' },
    createdAt: dateTime('Start of the conversation'),
    updatedAt: dateTime('Last message'),
    assistantId: assistantShown,
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

export const SCHEMAS: Record<string, JsonSchema> = {
  ...errorSchemas,
  ...responseSchemas,
  ...requestSchemas,
  ...streamSchemas,
  ...historySchemas,
  ...claimSchemas,
  ...memorySchemas,
  ...platformSchemas,
};
