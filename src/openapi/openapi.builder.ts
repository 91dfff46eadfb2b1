import { ERROR_CATALOGUE, type ErrorCode } from '../common/errors/error-catalogue.js';
import { CONVERSATION_PAGE, MESSAGE_PAGE } from '../conversations/dto/chat-history-query.dto.js';
import { MEMORY_PAGE } from '../memory/dto/memory-query.dto.js';
import { packageVersion } from '../common/runtime/package-version.js';
import { ERROR_MEANINGS } from './error-meanings.js';
import { FILES_OPERATIONS, FILES_SCHEMAS, FILES_TAG } from './files-operations.js';
import {
  VECTOR_STORES_OPERATIONS,
  VECTOR_STORES_SCHEMAS,
  VECTOR_STORES_TAG,
} from './vector-stores-operations.js';
import { ADMIN_OPERATIONS, ADMIN_SCHEMAS, ADMIN_TAG } from './admin-operations.js';
import { OPERATIONS, TAGS, type Access, type HttpMethod, type OperationSpec } from './operations.js';
import { SCHEMAS, ref, type JsonSchema } from './schemas.js';

/** Path item keys in a fixed order, so the document is byte-stable. */
const METHOD_ORDER: readonly HttpMethod[] = ['get', 'put', 'post', 'delete', 'options'];

/** Codes any route of an access kind can answer, besides its own. */
const ACCESS_ERRORS: Record<Access['kind'], ErrorCode[]> = {
  'api-key': [
    'missing_api_key',
    'invalid_api_key',
    'insufficient_scope',
    'rate_limit_exceeded',
    // Also when every database connection stayed busy for the pool's whole wait.
    'service_overloaded',
    // The database is unreachable (the key lookup is the first query of every such route).
    'service_unavailable',
    'server_error',
  ],
  public: ['server_error'],
  'mcp-oauth': ['service_unavailable', 'server_error'],
  'metrics-token': ['missing_token', 'invalid_token', 'server_error'],
  admin: [
    'missing_api_key',
    'invalid_api_key',
    'invalid_token',
    'insufficient_scope',
    'rate_limit_exceeded',
    'identity_provider_unavailable',
    'service_unavailable',
    'server_error',
  ],
};

/** Codes whose answers carry `Retry-After`: 429 and every 503 (the catalogue's default). */
const RETRY_AFTER_CODES: readonly ErrorCode[] = [
  'rate_limit_exceeded',
  'concurrency_limit_exceeded',
  'token_budget_exceeded',
  ...(Object.keys(ERROR_CATALOGUE) as ErrorCode[]).filter((code) => ERROR_CATALOGUE[code].status === 503),
];

/** Codes the JSON body parser answers before any route runs. */
const BODY_ERRORS: ErrorCode[] = ['invalid_request', 'payload_too_large'];

const header = (name: string): JsonSchema => ({ $ref: `#/components/headers/${name}` });

const SECURITY_SCHEMES: Record<string, JsonSchema> = {
  ApiKeyHeader: {
    type: 'apiKey',
    in: 'header',
    name: 'x-api-key',
    description:
      'An API key (`swb_…`, or a 64-hex key of the earlier format). A key has scopes `full_access`, `assistant`, ' +
      '`user` and/or `admin`; the roles listed in a security requirement are the scopes that grant the operation, ' +
      '`full_access` always among them except on the admin API, which only `admin` opens.',
  },
  ApiKeyBearer: {
    type: 'http',
    scheme: 'bearer',
    description: 'The same API key in `Authorization: Bearer <key>`; equivalent to `x-api-key`.',
  },
  McpOAuth: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'MCP gateway: an OAuth 2.0 access token from the identity provider (Authorization Code + PKCE), with the ' +
      "backend as audience and the `groups` claim naming the gateway's organization. The authorization server " +
      "is named in the gateway's Protected Resource Metadata.",
  },
  AdminToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'Admin API: an access token of the identity provider (`OIDC_ISSUER`, verified as the MCP gateway verifies ' +
      'its tokens) whose groups include `ADMIN_GROUP`: a platform administrator, for every organization.',
  },
  MetricsToken: {
    type: 'http',
    scheme: 'bearer',
    description: '`/metrics` only, when `METRICS_TOKEN` is set.',
  },
};

const HEADERS: Record<string, JsonSchema> = {
  RequestId: {
    description:
      'Request id: a sane incoming `x-request-id` echoed, otherwise `req_<uuid>`; also in the logs',
    schema: { type: 'string' },
  },
  ProcessingTime: {
    description:
      "The service's own time until the headers left, in milliseconds (for a stream: to its first byte)",
    schema: { type: 'integer' },
  },
  RateLimitLimit: {
    description: "The organization's requests per minute (when a limit applies)",
    schema: { type: 'integer' },
  },
  RateLimitRemaining: { description: 'Requests left in the current window', schema: { type: 'integer' } },
  RateLimitReset: { description: 'Time until the window resets, e.g. `42s`', schema: { type: 'string' } },
  RetryAfter: {
    description: 'Whole seconds to wait before retrying',
    schema: { type: 'integer', minimum: 1 },
  },
  WwwAuthenticate: {
    description:
      'MCP gateway: `Bearer resource_metadata="<absolute metadata URL>"`, plus `error` when a token failed',
    schema: { type: 'string' },
  },
  Allow: { description: 'The methods the route serves', schema: { type: 'string', const: 'POST' } },
  NextCursor: {
    description: 'Present when another page exists: pass it as `after`',
    schema: { type: 'string' },
  },
  Link: {
    description: 'The next page as `<url>; rel="next"`, when another page exists',
    schema: { type: 'string' },
  },
  AllowAnyOrigin: { description: 'Public metadata: `*`', schema: { type: 'string', const: '*' } },
  CacheControl: { description: '`public, max-age=300`', schema: { type: 'string' } },
  AllowOrigin: { description: 'The allowed origin, echoed', schema: { type: 'string' } },
  AllowMethods: { description: '`POST`', schema: { type: 'string' } },
  AllowHeaders: { description: 'The request headers MCP clients may send', schema: { type: 'string' } },
};

const pathParam = (name: string, description: string, schema: JsonSchema): JsonSchema => ({
  name,
  in: 'path',
  required: true,
  description,
  schema,
});
const queryParam = (name: string, description: string, schema: JsonSchema): JsonSchema => ({
  name,
  in: 'query',
  required: false,
  description,
  schema,
});
const headerParam = (
  name: string,
  required: boolean,
  description: string,
  schema: JsonSchema,
): JsonSchema => ({
  name,
  in: 'header',
  required,
  description,
  schema,
});

const USER_ID_SCHEMA: JsonSchema = { type: 'string', minLength: 1, maxLength: 256 };

const PARAMETERS: Record<string, JsonSchema> = {
  XUserId: headerParam(
    'x-user-id',
    false,
    "Opaque end-user id within the key's organization. Enables claims and memory and puts the conversation " +
      "in that user's history; without it the conversation is anonymous.",
    USER_ID_SCHEMA,
  ),
  XUserIdRequired: headerParam('x-user-id', true, 'The end user whose data this is', USER_ID_SCHEMA),
  XUserToken: headerParam(
    'x-user-token',
    false,
    'One end-user token, forwarded unchanged to MCP servers configured for it; not validated here',
    { type: 'string' },
  ),
  XUserTokens: headerParam(
    'x-user-tokens',
    false,
    'JSON object of OAuth provider id → access token, for tools that act as the user',
    { type: 'string', contentMediaType: 'application/json', examples: ['{"github":"gho_…"}'] },
  ),
  XSwitchboardEvents: headerParam(
    'x-switchboard-events',
    false,
    '`all` sends `response.status` events, `standard` leaves them out. Default: sent, except to requests ' +
      "carrying the official SDKs' `x-stainless-lang` header (their stream helpers reject unknown events).",
    { type: 'string', enum: ['all', 'standard'] },
  ),
  ResponseId: pathParam('id', 'A response id, `resp_<uuid>`', { type: 'string' }),
  StreamAgain: queryParam(
    'stream',
    '`true` streams the events of a background response (after `starting_after`), then follows it to its end',
    { type: 'string', enum: ['true', 'false'] },
  ),
  StartingAfter: queryParam(
    'starting_after',
    'With `stream=true`: send the events whose `sequence_number` is greater than this',
    { type: 'string', pattern: '^[0-9]{1,9}$' },
  ),
  ConversationId: pathParam('id', 'A conversation id (the `conversation.id` of its responses)', {
    type: 'string',
  }),
  UserIdPath: pathParam('userId', 'The end user (percent-encoded)', USER_ID_SCHEMA),
  ClaimKeyPath: pathParam('claimKey', 'The claim key', {
    type: 'string',
    pattern: '^[A-Za-z0-9._:-]{1,128}$',
  }),
  MemoryItemId: pathParam('itemId', 'A memory item id, `mem_<uuid>` or the bare UUID', { type: 'string' }),
  GatewayName: pathParam('name', 'The gateway name', { type: 'string' }),
  AssistantFilter: queryParam('assistant_id', 'Only this assistant: `asst_<uuid>` or the bare UUID', {
    type: 'string',
  }),
  MemoryLimit: queryParam('limit', `Items per page (default ${MEMORY_PAGE.default})`, {
    type: 'integer',
    minimum: 1,
    maximum: MEMORY_PAGE.max,
    default: MEMORY_PAGE.default,
  }),
  MemoryAfter: queryParam('after', 'The `nextCursor` of the previous page (opaque)', { type: 'string' }),
  ConversationLimit: queryParam('limit', `Conversations per page (default ${CONVERSATION_PAGE.default})`, {
    type: 'integer',
    minimum: 1,
    maximum: CONVERSATION_PAGE.max,
    default: CONVERSATION_PAGE.default,
  }),
  MessageLimit: queryParam('limit', `Messages per page (default ${MESSAGE_PAGE.default})`, {
    type: 'integer',
    minimum: 1,
    maximum: MESSAGE_PAGE.max,
    default: MESSAGE_PAGE.default,
  }),
  InputItemsLimit: queryParam('limit', 'Items per page (default 20)', {
    type: 'integer',
    minimum: 1,
    maximum: 100,
    default: 20,
  }),
  InputItemsAfter: queryParam('after', 'The `last_id` of the previous page', { type: 'string' }),
  InputItemsOrder: queryParam('order', 'Newest first (`desc`, the default) or oldest first', {
    type: 'string',
    enum: ['asc', 'desc'],
    default: 'desc',
  }),
  InputItemsInclude: queryParam(
    'include',
    'Only `message.input_image.image_url` (image URLs are always included); any other value is refused',
    { type: 'array', items: { type: 'string', enum: ['message.input_image.image_url'] } },
  ),
  ConversationApiId: pathParam(
    'id',
    'A conversation id: `conv_<uuid>`, or the bare UUID chat history shows',
    {
      type: 'string',
    },
  ),
  ConversationItemId: pathParam('itemId', 'An item id, as the item list shows it', { type: 'string' }),
  HistoryAfter: queryParam('after', 'The `x-next-cursor` of the previous page (opaque)', { type: 'string' }),
};

/** The security requirements: one alternative per scope that grants the operation, per key location. */
function security(access: Access): JsonSchema[] {
  switch (access.kind) {
    case 'api-key':
      return requiredScopes(access).flatMap((scope) => [
        { ApiKeyHeader: [scope] },
        { ApiKeyBearer: [scope] },
      ]);
    case 'public':
      return [];
    case 'mcp-oauth':
      return [{ McpOAuth: [] }];
    case 'metrics-token':
      // `{}`: the token is optional, depending on configuration.
      return [{}, { MetricsToken: [] }];
    case 'admin':
      return [{ ApiKeyHeader: ['admin'] }, { ApiKeyBearer: ['admin'] }, { AdminToken: [] }];
  }
}

/** The API-key scopes, any one of which grants the operation (`full_access` always does). */
function requiredScopes(access: Access): string[] {
  return access.kind === 'api-key' ? [...access.scopes, 'full_access'] : [];
}

function errorResponse(status: number, codes: ErrorCode[], access: Access): JsonSchema {
  const headers: Record<string, JsonSchema> = {
    'x-request-id': header('RequestId'),
    'x-processing-time-ms': header('ProcessingTime'),
  };
  if (status === 429) Object.assign(headers, rateLimitHeaders());
  if (codes.some((code) => RETRY_AFTER_CODES.includes(code))) headers['Retry-After'] = header('RetryAfter');
  if (access.kind === 'mcp-oauth' && (status === 401 || codes.includes('insufficient_scope'))) {
    headers['WWW-Authenticate'] = header('WwwAuthenticate');
  }
  if (codes.includes('method_not_allowed')) headers.Allow = header('Allow');
  return {
    description: codes.map((code) => `\`${code}\`: ${ERROR_MEANINGS[code]}`).join('\n\n'),
    headers,
    content: {
      'application/json': {
        schema: {
          allOf: [ref('ErrorEnvelope')],
          properties: { error: { properties: { code: { enum: codes } } } },
        },
      },
    },
  };
}

function rateLimitHeaders(): Record<string, JsonSchema> {
  return {
    'x-ratelimit-limit-requests': header('RateLimitLimit'),
    'x-ratelimit-remaining-requests': header('RateLimitRemaining'),
    'x-ratelimit-reset-requests': header('RateLimitReset'),
  };
}

/** An error status the operation also answers outside the envelope (the MCP layer's JSON-RPC errors). */
function mergeResponses(own: JsonSchema, envelope: JsonSchema): JsonSchema {
  const ownSchema = (own.content as Record<string, { schema: JsonSchema }>)['application/json'].schema;
  const envelopeSchema = (envelope.content as Record<string, { schema: JsonSchema }>)['application/json']
    .schema;
  return {
    ...envelope,
    description: `${own.description as string}\n\n${envelope.description as string}`,
    content: { 'application/json': { schema: { oneOf: [envelopeSchema, ownSchema] } } },
  };
}

function responsesOf(operation: OperationSpec): Record<string, JsonSchema> {
  const codes = [
    ...new Set([
      ...(operation.requestBody ? BODY_ERRORS : []),
      ...operation.errors,
      ...ACCESS_ERRORS[operation.access.kind],
    ]),
  ];
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_CATALOGUE[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, JsonSchema> = {};
  for (const [status, own] of Object.entries(operation.responses)) {
    responses[status] = withCommonHeaders(own, operation.access, Number(status) < 300);
  }
  for (const [status, statusCodes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const envelope = errorResponse(status, statusCodes, operation.access);
    const own = responses[String(status)];
    responses[String(status)] = own ? mergeResponses(own, envelope) : envelope;
  }
  return Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b)));
}

function withCommonHeaders(response: JsonSchema, access: Access, success: boolean): JsonSchema {
  const headers: Record<string, JsonSchema> = {
    'x-request-id': header('RequestId'),
    'x-processing-time-ms': header('ProcessingTime'),
    ...(response.headers as Record<string, JsonSchema> | undefined),
  };
  if (success && access.kind === 'api-key') Object.assign(headers, rateLimitHeaders());
  return { ...response, headers };
}

function operationObject(operation: OperationSpec, index: number): JsonSchema {
  // The claim routes answer under `/v1/user-claims` and `/user-claims`; the second form is the alias.
  const alias = index > 0;
  return {
    tags: [operation.tag],
    summary: operation.summary,
    ...(operation.description || alias
      ? {
          description: [operation.description, alias ? `Same as \`${operation.paths[0]}\`.` : undefined]
            .filter(Boolean)
            .join(' '),
        }
      : {}),
    operationId: alias ? `${operation.operationId}Unversioned` : operation.operationId,
    ...(operation.parameters ? { parameters: operation.parameters } : {}),
    ...(operation.requestBody ? { requestBody: operation.requestBody } : {}),
    responses: responsesOf(operation),
    security: security(operation.access),
    'x-required-scopes': requiredScopes(operation.access),
  };
}

const byName = <T>(entries: Record<string, T>): Record<string, T> =>
  Object.fromEntries(Object.entries(entries).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/**
 * The OpenAPI 3.1 document of the whole HTTP interface, built from the hand-written operation table
 * and schemas. Deterministic: paths and components are sorted by name, so `npm run openapi` only
 * changes docs/openapi.json when the interface changes.
 */
export function buildOpenApiDocument(): Record<string, unknown> {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const operation of [
    ...OPERATIONS,
    ...FILES_OPERATIONS,
    ...VECTOR_STORES_OPERATIONS,
    ...ADMIN_OPERATIONS,
  ]) {
    operation.paths.forEach((path, index) => {
      paths[path] ??= {};
      paths[path][operation.method] = operationObject(operation, index);
    });
  }
  const orderedPaths = Object.fromEntries(
    Object.entries(byName(paths)).map(([path, item]) => [
      path,
      Object.fromEntries(
        METHOD_ORDER.filter((method) => item[method]).map((method) => [method, item[method]]),
      ),
    ]),
  );
  // A deep copy: callers get plain JSON that shares nothing with the module's constants.
  return JSON.parse(
    JSON.stringify({
      openapi: '3.1.0',
      info: {
        title: 'Switchboard',
        version: packageVersion(),
        summary: 'Conversational assistants behind one OpenAI-compatible Responses API',
        description:
          'The HTTP interface of Switchboard. Every error, on every route, is `{error: {type, code, message}}`; ' +
          'an unknown route is 404 `not_found`. The error codes, their statuses and meanings are in ' +
          '`components.schemas.ErrorObject` and docs/api.md.',
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      servers: [{ url: '/' }],
      tags: [...TAGS, FILES_TAG, VECTOR_STORES_TAG, ADMIN_TAG],
      paths: orderedPaths,
      components: {
        schemas: byName({ ...SCHEMAS, ...FILES_SCHEMAS, ...VECTOR_STORES_SCHEMAS, ...ADMIN_SCHEMAS }),
        parameters: byName(PARAMETERS),
        headers: byName(HEADERS),
        securitySchemes: byName(SECURITY_SCHEMES),
      },
    }),
  ) as Record<string, unknown>;
}
