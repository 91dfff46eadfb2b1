import type { ApiKeyScope } from '../api-keys/entities/api-key.entity.js';
import type { ErrorCode } from '../common/errors/error-catalogue.js';
import { json, jsonBody, ref, STREAM_EVENT_TYPES, type JsonSchema } from './schemas.js';

/** How a route authenticates, mirroring `@RequireScopes` / `@Public` / `@OwnAuthentication`. */
export type Access =
  | { kind: 'api-key'; scopes: Exclude<ApiKeyScope, 'full_access'>[] }
  | { kind: 'public' }
  | { kind: 'mcp-oauth' }
  | { kind: 'metrics-token' }
  /** The admin API: an `admin` key or a platform administrator's token (`@AdminAccess()`). */
  | { kind: 'admin' };

export type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'options';

/**
 * One operation of the interface. `errors` lists the codes particular to it; the builder adds
 * those that follow from its access (401/403/429…) and from having a JSON body (400/413).
 */
export interface OperationSpec {
  method: HttpMethod;
  /** OpenAPI path templates; the claim routes answer under two prefixes. */
  paths: string[];
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  access: Access;
  parameters?: JsonSchema[];
  requestBody?: JsonSchema;
  /** Responses other than the error envelope, by status. */
  responses: Record<string, JsonSchema>;
  errors: ErrorCode[];
}

const param = (name: string): JsonSchema => ({ $ref: `#/components/parameters/${name}` });
const header = (name: string): JsonSchema => ({ $ref: `#/components/headers/${name}` });
const noContent = (description: string): JsonSchema => ({ description });

const USER_KEY: Access = { kind: 'api-key', scopes: ['user'] };
const ASSISTANT_KEY: Access = { kind: 'api-key', scopes: ['assistant'] };

const STREAM_DESCRIPTION = [
  'Server-Sent Events. Each event is one `event: <type>` line and one `data: <json>` line, then a blank line;',
  'the JSON repeats the type in `type` and carries `sequence_number` (0, 1, 2… without gaps).',
  'The payload schemas are `ResponseStreamEvent` in components (see `x-sse-event-schema`).',
  '',
  `Event types: ${STREAM_EVENT_TYPES.map((type) => `\`${type}\``).join(', ')}.`,
  '',
  'A text reply: `response.created`, `response.output_item.added`, `response.content_part.added`,',
  '`response.output_text.delta` (repeated), `response.output_text.done`, `response.output_item.done`,',
  '`response.completed`, then `data: [DONE]`. A client function call ends with `response.completed` whose',
  'status is `requires_action`. A failure after the stream started is a `response.error` event, after which',
  'the stream closes without `[DONE]`. After 15 quiet seconds (`SSE_HEARTBEAT_SECONDS`) the comment',
  '`: heartbeat` is sent. Responses carry `Cache-Control: no-cache, no-transform` and `X-Accel-Buffering: no`.',
].join('\n');

const STREAM_EXAMPLE = [
  'event: response.created',
  'data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_…","status":"in_progress",…}}',
  '',
  'event: response.output_text.delta',
  'data: {"type":"response.output_text.delta","sequence_number":3,"item_id":"msg_…","output_index":0,"content_index":0,"delta":"Hel","logprobs":[]}',
  '',
  'event: response.completed',
  'data: {"type":"response.completed","sequence_number":7,"response":{"id":"resp_…","status":"completed",…}}',
  '',
  'data: [DONE]',
  '',
].join('\n');

const responseOperations: OperationSpec[] = [
  {
    method: 'post',
    paths: ['/v1/responses'],
    operationId: 'createResponse',
    tag: 'Responses',
    summary: 'Send a message to an assistant; reply as JSON or as an event stream',
    description:
      'Compatible with the official `openai` SDK (`baseURL` = `<origin>/v1`). Everything that can fail before ' +
      'the first byte (authentication, validation, rate limit, unknown assistant or response) is a plain HTTP ' +
      'error with the JSON envelope, even with `stream: true`; later failures are `response.error` events. ' +
      'Without `previous_response_id` a new conversation starts; with it, the thread of that response continues ' +
      '(same assistant, same `x-user-id`).',
    access: ASSISTANT_KEY,
    parameters: [param('XUserId'), param('XUserToken'), param('XUserTokens'), param('XSwitchboardEvents')],
    requestBody: jsonBody(ref('CreateResponseRequest')),
    responses: {
      '200': {
        description:
          'Without `stream`: the Response (`completed` or `requires_action`). With `stream: true`: the event stream.',
        content: {
          'application/json': { schema: ref('Response') },
          'text/event-stream': {
            schema: { type: 'string', description: STREAM_DESCRIPTION },
            example: STREAM_EXAMPLE,
            'x-sse-event-schema': ref('ResponseStreamEvent'),
          },
        },
      },
    },
    errors: [
      'invalid_request',
      'missing_required_field',
      'invalid_model',
      'too_many_tools',
      'invalid_tool_name',
      'duplicate_tool_name',
      'tool_not_supported_for_model',
      'invalid_input_type',
      'missing_call_id',
      'context_length_exceeded',
      'content_policy_violation',
      'upstream_invalid_request',
      'assistant_not_found',
      'response_not_found',
      'conversation_not_found',
      'token_budget_exceeded',
      'upstream_stream_interrupted',
      'upstream_malformed_response',
      'upstream_unavailable',
      'upstream_timeout',
      'upstream_rate_limited',
      'service_overloaded',
      'upstream_stream_stalled',
      'concurrency_limit_exceeded',
      'quota_exceeded',
    ],
  },
  {
    method: 'post',
    paths: ['/v1/responses/compact'],
    operationId: 'compactResponse',
    tag: 'Responses',
    summary: 'Compact a conversation into fewer input items',
    description:
      'Open Responses `POST /responses/compact`. The request input (after the thread of `previous_response_id`, ' +
      'same assistant and `x-user-id`) becomes the newest user message, verbatim, and one `compaction` item ' +
      'summarising everything else, one line per message; send both as `input` of a later POST /v1/responses. ' +
      'Nothing is stored and no model is called. Fields other than those listed are 400 `invalid_request` by name.',
    access: ASSISTANT_KEY,
    parameters: [param('XUserId')],
    requestBody: jsonBody(ref('CompactResponseRequest')),
    responses: { '200': json(ref('CompactionResponse'), 'The compacted items') },
    errors: [
      'invalid_request',
      'missing_required_field',
      'invalid_model',
      'invalid_input_type',
      'missing_call_id',
      'assistant_not_found',
      'response_not_found',
    ],
  },
  {
    method: 'get',
    paths: ['/v1/responses/{id}'],
    operationId: 'getResponse',
    tag: 'Responses',
    summary: 'Read a response, or resume the stream of a background one',
    description:
      "The Response of the key's organization and of the same `x-user-id` (an anonymous response only without " +
      "one; another user's is 404), as `response.completed` carried it once finished; `queued` or " +
      '`in_progress` while it runs. With `stream=true` (background responses only), ' +
      'the events after `starting_after`, byte for byte as first sent, then the live turn to its end, from ' +
      'any replica. A turn that ended without a final event (cancelled, or its replica lost) ends with a ' +
      '`response.error` (`response_cancelled`, `response_interrupted`).',
    access: USER_KEY,
    parameters: [param('ResponseId'), param('StreamAgain'), param('StartingAfter'), param('XUserId')],
    responses: {
      '200': {
        description: 'The Response; with `stream=true`, the event stream',
        content: {
          'application/json': { schema: ref('Response') },
          'text/event-stream': {
            schema: { type: 'string', description: STREAM_DESCRIPTION },
            'x-sse-event-schema': ref('ResponseStreamEvent'),
          },
        },
      },
    },
    errors: ['invalid_request', 'response_not_found', 'service_overloaded', 'concurrency_limit_exceeded'],
  },
  {
    method: 'post',
    paths: ['/v1/responses/{id}/cancel'],
    operationId: 'cancelResponse',
    tag: 'Responses',
    summary: 'Cancel a background response',
    description:
      'From any replica: the response is `cancelled` at once and the replica running it aborts the model ' +
      'call and tools. A finished response is answered as it is; cancelling twice is harmless. Only ' +
      'responses created with `background: true` (400 otherwise), of the same `x-user-id`.',
    access: USER_KEY,
    parameters: [param('ResponseId'), param('XUserId')],
    responses: { '200': json(ref('Response'), 'The response, `cancelled` or as it finished') },
    errors: ['invalid_request', 'response_not_found'],
  },
  {
    method: 'get',
    paths: ['/v1/responses/{id}/input_items'],
    operationId: 'listResponseInputItems',
    tag: 'Responses',
    summary: 'The input items a response was created with',
    description:
      "The items of that request as sent (not those of earlier turns), in OpenAI's list shape. Only the " +
      "response's own end user sees them: `x-user-id` must be the one the turn was made with (none for an " +
      'anonymous turn), as for `previous_response_id`.',
    access: USER_KEY,
    parameters: [
      param('ResponseId'),
      param('XUserId'),
      param('InputItemsLimit'),
      param('InputItemsAfter'),
      param('InputItemsOrder'),
      param('InputItemsInclude'),
    ],
    responses: { '200': json(ref('InputItemList'), 'A page of input items') },
    errors: ['invalid_request', 'response_not_found'],
  },
  {
    method: 'delete',
    paths: ['/v1/responses/{id}'],
    operationId: 'deleteResponse',
    tag: 'Responses',
    summary: 'Delete a stored response',
    description:
      'Removes the response and its chat-history messages for good (same `x-user-id` rule as input_items). ' +
      'It can no longer be read or continued, and neither can turns that continued from it: continuing one is ' +
      '400 `invalid_request` naming `previous_response_id`. Earlier turns stay and can start a new branch.',
    access: USER_KEY,
    parameters: [param('ResponseId'), param('XUserId')],
    responses: { '200': json(ref('ResponseDeleted'), 'Deleted') },
    errors: ['invalid_request', 'response_not_found'],
  },
];

const historyOperations: OperationSpec[] = [
  {
    method: 'get',
    paths: ['/v1/chat/history/conversations'],
    operationId: 'listConversations',
    tag: 'Chat history',
    summary: "The user's conversations, most recently updated first",
    description:
      'A page of the conversations of `x-user-id` (anonymous conversations are in no history). When more exist, ' +
      'the `x-next-cursor` header holds the cursor to pass as `after`.',
    access: USER_KEY,
    parameters: [
      param('XUserIdRequired'),
      param('ConversationLimit'),
      param('HistoryAfter'),
      param('AssistantFilter'),
    ],
    responses: {
      '200': json({ type: 'array', items: ref('Conversation') }, 'A page of conversations', {
        headers: { 'x-next-cursor': header('NextCursor'), Link: header('Link') },
      }),
    },
    errors: ['missing_required_field', 'invalid_request', 'assistant_not_found'],
  },
  {
    method: 'get',
    paths: ['/v1/chat/history/conversations/{id}/messages'],
    operationId: 'listConversationMessages',
    tag: 'Chat history',
    summary: 'The messages of one conversation, oldest first',
    description:
      'User and assistant text only (tool traffic stays on the responses), along the branch of the newest turn. ' +
      "Another user's or organization's conversation is the same 404 as a missing one.",
    access: USER_KEY,
    parameters: [
      param('XUserIdRequired'),
      param('ConversationId'),
      param('MessageLimit'),
      param('HistoryAfter'),
    ],
    responses: {
      '200': json({ type: 'array', items: ref('Message') }, 'A page of messages', {
        headers: { 'x-next-cursor': header('NextCursor'), Link: header('Link') },
      }),
    },
    errors: ['missing_required_field', 'invalid_request', 'conversation_not_found'],
  },
];

const CONVERSATION_OWNER =
  'Owned as chat history owns conversations: the organization and `x-user-id` (without the header, ' +
  "anonymous conversations only). Another user's or organization's conversation is the same 404 as a missing one.";
const conversationPath = (suffix = '') => [`/v1/conversations${suffix}`];

/** The fields every Conversations API operation shares: a user key's, for an owner in `x-user-id`. */
type ConversationOperationSpec = Omit<OperationSpec, 'paths' | 'tag' | 'access'> & { path?: string };

/** A Conversations API operation under `/v1/conversations<path>`; its description ends with the owner rule. */
function conversationOperation({
  path = '',
  description,
  ...spec
}: ConversationOperationSpec): OperationSpec {
  return {
    ...spec,
    paths: conversationPath(path),
    tag: 'Conversations',
    description: description ? `${description} ${CONVERSATION_OWNER}` : CONVERSATION_OWNER,
    access: USER_KEY,
  };
}

const conversationOperations: OperationSpec[] = [
  conversationOperation({
    method: 'post',
    operationId: 'createConversation',
    summary: 'Create a conversation, optionally with items and metadata',
    description:
      'The conversation appears in the chat history of `x-user-id` and can be continued with `conversation` on ' +
      'POST /v1/responses.',
    parameters: [param('XUserId')],
    requestBody: { content: { 'application/json': { schema: ref('CreateConversationRequest') } } },
    responses: { '200': json(ref('ConversationObject'), 'The conversation') },
    errors: ['invalid_request', 'invalid_input_type', 'missing_call_id', 'quota_exceeded'],
  }),
  conversationOperation({
    method: 'get',
    path: '/{id}',
    operationId: 'retrieveConversation',
    summary: 'One conversation',
    parameters: [param('XUserId'), param('ConversationApiId')],
    responses: { '200': json(ref('ConversationObject'), 'The conversation') },
    errors: ['invalid_request', 'conversation_not_found'],
  }),
  conversationOperation({
    method: 'post',
    path: '/{id}',
    operationId: 'updateConversation',
    summary: "Replace a conversation's metadata",
    parameters: [param('XUserId'), param('ConversationApiId')],
    requestBody: jsonBody(ref('UpdateConversationRequest')),
    responses: { '200': json(ref('ConversationObject'), 'The conversation') },
    errors: ['missing_required_field', 'invalid_request', 'conversation_not_found'],
  }),
  conversationOperation({
    method: 'delete',
    path: '/{id}',
    operationId: 'deleteConversation',
    summary: 'Delete a conversation with its responses and chat-history messages',
    parameters: [param('XUserId'), param('ConversationApiId')],
    responses: { '200': json(ref('ConversationDeleted'), 'Deleted') },
    errors: ['invalid_request', 'conversation_not_found'],
  }),
  conversationOperation({
    method: 'get',
    path: '/{id}/items',
    operationId: 'listConversationItems',
    summary: "The items of the conversation's current branch",
    description: "Each turn's input items, then its output items, along the branch of the newest turn.",
    parameters: [
      param('XUserId'),
      param('ConversationApiId'),
      param('InputItemsAfter'),
      param('InputItemsLimit'),
      param('InputItemsOrder'),
      param('InputItemsInclude'),
    ],
    responses: { '200': json(ref('ConversationItemList'), 'A page of items') },
    errors: ['invalid_request', 'conversation_not_found'],
  }),
  conversationOperation({
    method: 'post',
    path: '/{id}/items',
    operationId: 'createConversationItems',
    summary: 'Append up to 20 items; the next turn sees them',
    parameters: [param('XUserId'), param('ConversationApiId'), param('InputItemsInclude')],
    requestBody: jsonBody(ref('CreateConversationItemsRequest')),
    responses: { '200': json(ref('ConversationItemList'), 'The items added') },
    errors: [
      'invalid_request',
      'invalid_input_type',
      'missing_call_id',
      'conversation_not_found',
      'quota_exceeded',
    ],
  }),
  conversationOperation({
    method: 'get',
    path: '/{id}/items/{itemId}',
    operationId: 'retrieveConversationItem',
    summary: 'One item',
    parameters: [
      param('XUserId'),
      param('ConversationApiId'),
      param('ConversationItemId'),
      param('InputItemsInclude'),
    ],
    responses: { '200': json(ref('ConversationItem'), 'The item') },
    errors: ['invalid_request', 'conversation_not_found', 'item_not_found'],
  }),
  conversationOperation({
    method: 'delete',
    path: '/{id}/items/{itemId}',
    operationId: 'deleteConversationItem',
    summary: 'Remove an item from the conversation, from what the model sees next and from chat history',
    parameters: [param('XUserId'), param('ConversationApiId'), param('ConversationItemId')],
    responses: { '200': json(ref('ConversationObject'), 'The conversation') },
    errors: ['invalid_request', 'conversation_not_found', 'item_not_found'],
  }),
];

const CLAIM_PATHS = (suffix: string) => [`/v1/user-claims${suffix}`, `/user-claims${suffix}`];

const claimOperations: OperationSpec[] = [
  {
    method: 'post',
    paths: CLAIM_PATHS(''),
    operationId: 'upsertUserClaim',
    tag: 'User claims',
    summary: 'Create or replace one claim',
    access: USER_KEY,
    requestBody: jsonBody(ref('ClaimInput')),
    responses: { '200': json(ref('ClaimRecord'), 'The stored claim') },
    errors: ['missing_required_field', 'claim_value_too_large'],
  },
  {
    method: 'post',
    paths: CLAIM_PATHS('/bulk'),
    operationId: 'upsertUserClaimsBulk',
    tag: 'User claims',
    summary: 'Create or replace up to 50 claims, all or nothing',
    access: USER_KEY,
    requestBody: jsonBody(ref('BulkClaimsRequest')),
    responses: {
      '200': json({ type: 'array', items: ref('ClaimRecord') }, 'The stored claims, in the order sent'),
    },
    errors: ['missing_required_field', 'bulk_limit_exceeded', 'claim_value_too_large'],
  },
  {
    method: 'get',
    paths: CLAIM_PATHS('/{userId}'),
    operationId: 'listUserClaims',
    tag: 'User claims',
    summary: "A user's claims, by claimKey",
    access: USER_KEY,
    parameters: [param('UserIdPath')],
    responses: {
      '200': json({ type: 'array', items: ref('ClaimRecord') }, 'Every claim of the user (`[]` for none)'),
    },
    errors: ['invalid_request'],
  },
  {
    method: 'get',
    paths: CLAIM_PATHS('/{userId}/{claimKey}'),
    operationId: 'getUserClaim',
    tag: 'User claims',
    summary: 'One claim',
    access: USER_KEY,
    parameters: [param('UserIdPath'), param('ClaimKeyPath')],
    responses: { '200': json(ref('ClaimRecord'), 'The claim') },
    errors: ['invalid_request', 'claim_not_found'],
  },
  {
    method: 'delete',
    paths: CLAIM_PATHS('/{userId}/{claimKey}'),
    operationId: 'deleteUserClaim',
    tag: 'User claims',
    summary: 'Erase one claim',
    access: USER_KEY,
    parameters: [param('UserIdPath'), param('ClaimKeyPath')],
    responses: { '204': noContent('Deleted (the row is removed)') },
    errors: ['invalid_request', 'claim_not_found'],
  },
];

const MEMORY_NOTE =
  'Acts on the user named by `x-user-id`, narrowed to one assistant by `assistant_id` when given.';

const memoryOperations: OperationSpec[] = [
  {
    method: 'get',
    paths: ['/v1/memory'],
    operationId: 'listMemory',
    tag: 'Memory',
    summary: 'What the assistants remember of the user, newest first',
    description: `${MEMORY_NOTE} Paginated with \`limit\` and \`after\` (= \`nextCursor\`).`,
    access: USER_KEY,
    parameters: [
      param('XUserIdRequired'),
      param('AssistantFilter'),
      param('MemoryLimit'),
      param('MemoryAfter'),
    ],
    responses: { '200': json(ref('MemoryList'), 'A page of memory items and the opt-out state') },
    errors: ['missing_required_field', 'invalid_request', 'assistant_not_found'],
  },
  {
    method: 'delete',
    paths: ['/v1/memory'],
    operationId: 'deleteMemory',
    tag: 'Memory',
    summary: "Erase the user's memory (all of it, or one assistant's)",
    description: MEMORY_NOTE,
    access: USER_KEY,
    parameters: [param('XUserIdRequired'), param('AssistantFilter')],
    responses: { '200': json(ref('MemoryDeleted'), 'How many items were erased') },
    errors: ['missing_required_field', 'invalid_request', 'assistant_not_found'],
  },
  {
    method: 'post',
    paths: ['/v1/memory/opt-out'],
    operationId: 'optOutOfMemory',
    tag: 'Memory',
    summary: 'Stop loading and saving memory for the user',
    description: `${MEMORY_NOTE} Does not delete what is stored; posting again changes nothing.`,
    access: USER_KEY,
    parameters: [param('XUserIdRequired'), param('AssistantFilter')],
    responses: { '200': json(ref('MemoryOptOutState'), 'The opt-out now in force') },
    errors: ['missing_required_field', 'invalid_request', 'assistant_not_found'],
  },
  {
    method: 'delete',
    paths: ['/v1/memory/opt-out'],
    operationId: 'optInToMemory',
    tag: 'Memory',
    summary: 'Undo an opt-out',
    description: `${MEMORY_NOTE} Without \`assistant_id\`, removes every opt-out of the user.`,
    access: USER_KEY,
    parameters: [param('XUserIdRequired'), param('AssistantFilter')],
    responses: {
      '200': json(
        ref('MemoryOptOutState'),
        '`optedOut` stays true when an opt-out of every assistant remains',
      ),
    },
    errors: ['missing_required_field', 'invalid_request', 'assistant_not_found'],
  },
  {
    method: 'delete',
    paths: ['/v1/memory/{itemId}'],
    operationId: 'deleteMemoryItem',
    tag: 'Memory',
    summary: 'Erase one memory item',
    description: `${MEMORY_NOTE} Another user's or organization's item is the same 404 as a missing one.`,
    access: USER_KEY,
    parameters: [param('XUserIdRequired'), param('MemoryItemId'), param('AssistantFilter')],
    responses: { '204': noContent('Deleted (the row is removed)') },
    errors: ['missing_required_field', 'invalid_request', 'assistant_not_found', 'memory_item_not_found'],
  },
];

const GATEWAY_METADATA_RESPONSE: JsonSchema = json(ref('ProtectedResourceMetadata'), 'RFC 9728 metadata', {
  headers: {
    'Access-Control-Allow-Origin': header('AllowAnyOrigin'),
    'Cache-Control': header('CacheControl'),
  },
});

/** A Streamable HTTP method the stateless gateway does not offer: documented so clients see the 405. */
function gatewayMethodNotOffered(method: HttpMethod, operationId: string, summary: string): OperationSpec {
  return {
    method,
    paths: ['/mcp-gateway/{name}'],
    operationId,
    tag: 'MCP gateway',
    summary,
    access: { kind: 'public' },
    parameters: [param('GatewayName')],
    responses: {},
    errors: ['method_not_allowed'],
  };
}

const gatewayOperations: OperationSpec[] = [
  {
    method: 'post',
    paths: ['/mcp-gateway/{name}'],
    operationId: 'callMcpGateway',
    tag: 'MCP gateway',
    summary: 'MCP endpoint (Streamable HTTP, stateless, JSON replies)',
    description:
      'JSON-RPC messages of the Model Context Protocol: `initialize`, `ping`, `tools/list`, `tools/call`. ' +
      "Needs an OAuth access token of the gateway's organization from the identity provider; without one the " +
      '401 carries `WWW-Authenticate: Bearer resource_metadata="<metadata URL>"`. A request with an `Origin` ' +
      'header is served only from an allowed origin. Clients send `Accept: application/json, text/event-stream`.',
    access: { kind: 'mcp-oauth' },
    parameters: [param('GatewayName')],
    requestBody: jsonBody(ref('JsonRpcMessage'), 'One JSON-RPC request or notification'),
    responses: {
      '200': json(ref('JsonRpcMessage'), 'The JSON-RPC response'),
      '202': noContent('A notification or response was accepted'),
      '400': json(
        ref('JsonRpcMessage'),
        'Not a valid JSON-RPC message (a JSON-RPC error from the MCP layer)',
      ),
      '406': json(ref('JsonRpcMessage'), '`Accept` lacks `application/json` or `text/event-stream`'),
      '415': json(ref('JsonRpcMessage'), '`Content-Type` is not `application/json`'),
    },
    errors: [
      'origin_not_allowed',
      'not_found',
      'missing_token',
      'invalid_token',
      'insufficient_scope',
      'identity_provider_unavailable',
    ],
  },
  gatewayMethodNotOffered('get', 'openMcpGatewayStream', 'Not offered: the gateway is stateless'),
  gatewayMethodNotOffered('delete', 'endMcpGatewaySession', 'Not offered: the gateway has no sessions'),
  {
    method: 'options',
    paths: ['/mcp-gateway/{name}'],
    operationId: 'preflightMcpGateway',
    tag: 'MCP gateway',
    summary: 'CORS preflight for browser-based MCP clients of an allowed origin',
    access: { kind: 'public' },
    parameters: [param('GatewayName')],
    responses: {
      '204': {
        description: 'The origin is allowed (or no `Origin` was sent)',
        headers: {
          'Access-Control-Allow-Origin': header('AllowOrigin'),
          'Access-Control-Allow-Methods': header('AllowMethods'),
          'Access-Control-Allow-Headers': header('AllowHeaders'),
        },
      },
    },
    errors: ['origin_not_allowed'],
  },
  {
    method: 'get',
    paths: ['/mcp-gateway/{name}/.well-known/oauth-protected-resource'],
    operationId: 'getMcpGatewayMetadata',
    tag: 'MCP gateway',
    summary: 'OAuth Protected Resource Metadata of a gateway',
    description:
      'The location the `WWW-Authenticate` challenge names. `resource` is the gateway URL on the admin origin.',
    access: { kind: 'public' },
    parameters: [param('GatewayName')],
    responses: { '200': GATEWAY_METADATA_RESPONSE },
    errors: ['not_found'],
  },
  {
    method: 'get',
    paths: ['/.well-known/oauth-protected-resource/mcp-gateway/{name}'],
    operationId: 'getMcpGatewayMetadataWellKnown',
    tag: 'MCP gateway',
    summary: "The same metadata at RFC 9728's path-inserted location",
    access: { kind: 'public' },
    parameters: [param('GatewayName')],
    responses: { '200': GATEWAY_METADATA_RESPONSE },
    errors: ['not_found'],
  },
];

const operationsOperations: OperationSpec[] = [
  {
    method: 'get',
    paths: ['/healthz'],
    operationId: 'liveness',
    tag: 'Operations',
    summary: 'Liveness: the process answers',
    access: { kind: 'public' },
    responses: { '200': json(ref('Liveness'), 'Alive') },
    errors: [],
  },
  {
    method: 'get',
    paths: ['/readyz'],
    operationId: 'readiness',
    tag: 'Operations',
    summary: 'Readiness: accepting requests, database reachable, schema migrated',
    access: { kind: 'public' },
    responses: {
      '200': json(ref('Readiness'), 'Ready'),
      '503': json(ref('Readiness'), 'Not ready (shutting down, database down, or migrations pending)'),
    },
    errors: [],
  },
  {
    method: 'get',
    paths: ['/metrics'],
    operationId: 'metrics',
    tag: 'Operations',
    summary: 'Prometheus metrics of this replica',
    description:
      'With `METRICS_TOKEN` set, it needs `Authorization: Bearer <METRICS_TOKEN>`. Without one it is 401 ' +
      '`missing_token`, unless the operator opened it with `METRICS_PUBLIC=true`.',
    access: { kind: 'metrics-token' },
    responses: {
      '200': {
        description: 'Prometheus text exposition format',
        content: { 'text/plain': { schema: { type: 'string' } } },
      },
    },
    errors: [],
  },
  {
    method: 'get',
    paths: ['/openapi.json'],
    operationId: 'openApiDocument',
    tag: 'Operations',
    summary: 'This OpenAPI document',
    access: { kind: 'public' },
    responses: {
      '200': json({ type: 'object', description: 'OpenAPI 3.1' }, 'The OpenAPI document of this version'),
    },
    errors: [],
  },
];

const query = (name: string, description: string, schema: Record<string, unknown>) => ({
  name,
  in: 'query',
  required: false,
  description,
  schema,
});
const tokens = { type: 'integer', minimum: 0 };

/** The counts of a usage line and of the total. */
const COUNTS_SCHEMA = {
  turns: tokens,
  input_tokens: tokens,
  cached_tokens: tokens,
  output_tokens: tokens,
  reasoning_tokens: tokens,
  total_tokens: tokens,
  cost: {
    type: 'object',
    additionalProperties: { type: 'number' },
    description: 'Per currency code; empty when no model involved has prices',
  },
};
const COUNT_NAMES = Object.keys(COUNTS_SCHEMA);

/** The caller's usage: an admin key's organization, or every organization for a platform administrator. */
const USAGE_OPERATION: OperationSpec = {
  method: 'get',
  paths: ['/admin/v1/usage'],
  operationId: 'getUsage',
  tag: 'Usage',
  summary:
    'Tokens and cost by hour, day or month and by any dimension, of every organization the caller administers',
  description:
    'Sums of the tokens the upstream models reported for every finished, failed or incomplete turn, ' +
    'by UTC hour, day or month and by the dimensions named in `group_by`, with their `total` over the range. ' +
    'Cost is computed when each turn is ' +
    "written, from the price table of the model's settings (`model.prices`), per currency.",
  access: { kind: 'admin' },
  parameters: [
    query('period', '`hour` (a range of at most 31 days), `day` (default) or `month`', {
      type: 'string',
      enum: ['hour', 'day', 'month'],
    }),
    query('group_by', 'Comma-separated: organization, assistant, specialist, key, user, model', {
      type: 'string',
    }),
    query('from', 'First UTC day, inclusive (default: the first of the current month)', {
      type: 'string',
      format: 'date',
    }),
    query('to', 'Last UTC day, inclusive (default: today); at most 366 days after `from`', {
      type: 'string',
      format: 'date',
    }),
    query('assistant_id', 'Only this assistant (`asst_<uuid>` or the bare UUID)', { type: 'string' }),
    query('user_id', 'Only this end user (`x-user-id`)', { type: 'string' }),
  ],
  responses: {
    '200': {
      description: 'One line per period and combination of the grouped dimensions',
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: ['object', 'data', 'total'],
            properties: {
              object: { type: 'string', const: 'list' },
              total: {
                type: 'object',
                description: 'The sum of every line (costs rounded to 8 decimals per currency)',
                required: COUNT_NAMES,
                properties: COUNTS_SCHEMA,
              },
              data: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['period', ...COUNT_NAMES],
                  properties: {
                    period: {
                      type: 'string',
                      description: '`YYYY-MM-DDTHH:00:00Z` (hour), `YYYY-MM-DD` (day) or `YYYY-MM` (month)',
                    },
                    organization_id: { type: 'string' },
                    assistant_id: { type: 'string' },
                    specialist: { type: 'string', description: '`generic` for the assistant itself' },
                    key_id: { type: 'string' },
                    user_id: {
                      type: ['string', 'null'],
                      description: 'null for turns without `x-user-id`',
                    },
                    model: {
                      type: ['string', 'null'],
                      description:
                        'The upstream model that answered (`offline` for the offline model); null: not recorded',
                    },
                    ...COUNTS_SCHEMA,
                  },
                },
              },
            },
          },
        },
      },
    },
  },
  errors: ['invalid_request'],
};

/** Usage accounting, under the admin API's prefix. */
const usageOperations: OperationSpec[] = [
  USAGE_OPERATION,
  {
    ...USAGE_OPERATION,
    paths: ['/admin/v1/organizations/{org}/usage'],
    operationId: 'getOrganizationUsage',
    summary: "One organization's tokens and cost (an admin key names its own organization only)",
    parameters: [
      { name: 'org', in: 'path', required: true, description: 'Slug or id', schema: { type: 'string' } },
      ...(USAGE_OPERATION.parameters ?? []),
    ],
    errors: ['invalid_request', 'not_found'],
  },
];

export const OPERATIONS: readonly OperationSpec[] = [
  ...responseOperations,
  ...historyOperations,
  ...conversationOperations,
  ...claimOperations,
  ...memoryOperations,
  ...gatewayOperations,
  ...usageOperations,
  ...operationsOperations,
];

export const TAGS: readonly { name: string; description: string }[] = [
  { name: 'Responses', description: 'The OpenAI-compatible Responses API (spec 4.1, 6)' },
  { name: 'Chat history', description: "A user's conversations and their messages (spec 4.2, 4.3)" },
  {
    name: 'Conversations',
    description: "OpenAI's Conversations API on the conversations chat history shows",
  },
  {
    name: 'User claims',
    description:
      'Facts your application stores about a user; every route also answers without `/v1` (spec 4.4)',
  },
  { name: 'Memory', description: 'What assistants saved about a user: list, erase, opt out (spec 4.5)' },
  { name: 'MCP gateway', description: 'Server-side tools for MCP clients behind OAuth (spec 4.6, 5.4)' },
  { name: 'Usage', description: 'Token usage and cost, under the admin API prefix' },
  { name: 'Operations', description: 'Probes, metrics and this document' },
];
