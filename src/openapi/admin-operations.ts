import type { OperationSpec } from './operations.js';
import { json, jsonBody, nullable, pathParam, ref, type JsonSchema } from './schemas.js';

/**
 * The admin HTTP API (/admin/v1, src/admin-api): its operations and schemas. Kept apart from
 * operations.ts, which describes the API-key interface; the builder joins the two.
 */

const ADMIN = { kind: 'admin' } as const;
const TAG = 'Admin';

const dateTime: JsonSchema = { type: 'string', format: 'date-time' };
const strings: JsonSchema = { type: 'array', items: { type: 'string' } };
const anyObject = (description: string): JsonSchema => ({ type: 'object', description });
const object = (properties: Record<string, JsonSchema>, required = Object.keys(properties)): JsonSchema => ({
  type: 'object',
  required,
  properties,
});
const list = (item: string): JsonSchema =>
  object({ object: { type: 'string', const: 'list' }, data: { type: 'array', items: ref(item) } });
const query = (name: string, description: string, schema: JsonSchema): JsonSchema => ({
  name,
  in: 'query',
  required: false,
  description,
  schema,
});

const ORG = pathParam('org', 'The organization, by slug or id');
const ASSISTANT = pathParam('assistant', 'The assistant, by id (bare or `asst_<uuid>`) or by name');
const ACTION: JsonSchema = {
  type: 'string',
  enum: ['created', 'updated', 'unchanged'],
  description: 'What the call did; `unchanged` writes nothing (and no audit row)',
};
const withAction = (schema: string): JsonSchema => ({
  allOf: [ref(schema), object({ action: ACTION })],
});

export const ADMIN_SCHEMAS: Record<string, JsonSchema> = {
  AdminOrganization: object({
    id: { type: 'string', format: 'uuid' },
    slug: { type: 'string' },
    name: { type: 'string' },
    rateLimitPerMinute: nullable({ type: 'integer', description: 'null: the configured default' }),
    monthlyTokenBudget: nullable({ type: 'integer', description: 'Tokens per UTC month; null: no budget' }),
    secretEnvGrants: {
      type: 'array',
      items: { type: 'string' },
      description: "Environment variables the organization's admin may reference (set by the platform)",
    },
    ssrfAllowlist: {
      type: 'array',
      items: { type: 'string' },
      description: "Non-public hosts the organization's configuration may reach (set by the platform)",
    },
    createdAt: dateTime,
  }),
  AdminUpstreamTarget: object({
    assistantId: { type: 'string', format: 'uuid' },
    specialist: nullable({
      type: 'string',
      description: "The specialist whose model this is; null: the assistant's",
    }),
    index: {
      type: 'integer',
      description: "Position in the declared order (0: the model settings' own baseUrl/model)",
    },
    target: { type: 'string', description: '`model@host`' },
    model: { type: 'string' },
    baseUrl: { type: 'string' },
    state: {
      type: 'string',
      enum: ['closed', 'open', 'half_open'],
      description:
        'open: cooling down (tried only after every other target); half_open: the next call probes it',
    },
    consecutiveFailures: { type: 'integer' },
    cooldownRemainingMs: { type: 'integer', description: "Left of an open breaker's cooldown; 0 otherwise" },
  }),
  AdminUpstreamAttempt: object(
    {
      target: { type: 'string', description: '`model@host`' },
      model: { type: 'string' },
      index: { type: 'integer', description: 'Position of the target in the declared order' },
      outcome: {
        type: 'string',
        description: '`completed`, or the failure code (`upstream_rate_limited`, …)',
      },
      httpStatus: {
        type: 'integer',
        description: "The upstream's HTTP status, when it answered with an error",
      },
      durationMs: { type: 'integer' },
      answered: { type: 'boolean', description: "This target's output reached the turn" },
      continuation: {
        type: 'string',
        enum: ['prefill', 'replay'],
        description:
          'This try continued an answer cut on the target before (docs/resilience.md#continuation)',
      },
    },
    ['target', 'model', 'index', 'outcome', 'durationMs'],
  ),
  AdminOrganizationInput: object(
    {
      name: { type: 'string', minLength: 1, maxLength: 200 },
      rateLimitPerMinute: nullable({
        type: 'integer',
        minimum: 1,
        description: 'Platform administrators only; null returns to the default',
      }),
      monthlyTokenBudget: nullable({
        type: 'integer',
        minimum: 1,
        description: 'Platform administrators only; tokens per UTC month, null for no budget',
      }),
      secretEnvGrants: nullable({
        type: 'array',
        items: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
        maxItems: 100,
        description:
          "Platform administrators only: the environment variables this organization's admin may reference " +
          "(never the service's own); null for none",
      }),
      ssrfAllowlist: nullable({
        type: 'array',
        items: { type: 'string' },
        maxItems: 100,
        description:
          "Platform administrators only: non-public hosts (CIDRs, addresses, names, host:port) this organization's " +
          'configuration may reach; null for none',
      }),
    },
    [],
  ),
  AdminAssistant: object({
    id: { type: 'string', format: 'uuid' },
    organizationId: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    instructions: { type: 'string' },
    model: anyObject(
      'Model settings, as `assistants create --model-json` (see docs/admin-cli.md); `fallbacks`, `weight`, `prefill` and `failover` (with `continuation`, `balance` and `reportModel`) declare further upstream targets (docs/resilience.md)',
    ),
    tools: strings,
    createdAt: dateTime,
    updatedAt: dateTime,
  }),
  AdminAssistantInput: object(
    {
      instructions: { type: 'string' },
      model: anyObject('The whole model settings object; omitted keeps the current one'),
      tools: { ...strings, description: 'Server-side tools by catalogue name; replaces the list' },
    },
    [],
  ),
  AdminSpecialist: object({
    id: { type: 'string', format: 'uuid' },
    organizationId: { type: 'string', format: 'uuid' },
    assistantId: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    role: { type: 'string' },
    instructions: { type: 'string' },
    model: nullable(anyObject("The specialist's own model; null: the assistant's")),
    tools: strings,
    createdAt: dateTime,
    updatedAt: dateTime,
  }),
  AdminSpecialistInput: object(
    {
      role: { type: 'string', description: 'Required to create' },
      instructions: { type: 'string' },
      model: nullable(anyObject("null: the assistant's model")),
      tools: strings,
    },
    [],
  ),
  AdminTool: object({
    id: { type: 'string', format: 'uuid' },
    organizationId: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    kind: { type: 'string', enum: ['web_search', 'rest', 'mcp'] },
    description: { type: 'string' },
    plugin: nullable(anyObject('The plugin (OAuth provider) the tool belongs to')),
    config: anyObject('The tool configuration for its kind (docs/tools.md)'),
    createdAt: dateTime,
    updatedAt: dateTime,
  }),
  AdminToolInput: object(
    {
      kind: { type: 'string', enum: ['web_search', 'rest', 'mcp'] },
      config: anyObject('The tool configuration for its kind (docs/tools.md)'),
      description: { type: 'string' },
      plugin: nullable({ type: 'string', description: 'A plugin of the organization; null detaches' }),
    },
    ['kind', 'config'],
  ),
  AdminGateway: object({
    id: { type: 'string', format: 'uuid' },
    organizationId: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    tools: strings,
    url: nullable({ type: 'string', format: 'uri' }),
    createdAt: dateTime,
    updatedAt: dateTime,
  }),
  AdminGatewayInput: object({
    tools: { ...strings, description: 'Catalogue tool names it exposes, or `["*"]` for all' },
  }),
  AdminApiKey: object({
    id: { type: 'string', format: 'uuid' },
    organizationId: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    hint: { type: 'string', description: '`swb_…` and the last four characters, or `legacy`' },
    scopes: { type: 'array', items: { type: 'string', enum: ['full_access', 'assistant', 'user', 'admin'] } },
    legacy: { type: 'boolean' },
    createdAt: dateTime,
    lastUsedAt: nullable(dateTime),
    revokedAt: nullable(dateTime),
  }),
  AdminApiKeyCreated: {
    allOf: [
      ref('AdminApiKey'),
      object({ secret: { type: 'string', description: 'The key itself: shown this once, never again' } }),
    ],
  },
  AdminApiKeyInput: object({
    name: { type: 'string', minLength: 1, maxLength: 200 },
    scopes: {
      type: 'array',
      minItems: 1,
      items: { type: 'string', enum: ['full_access', 'assistant', 'user', 'admin'] },
    },
  }),
  AdminDeleted: object({
    id: { type: 'string' },
    name: { type: 'string' },
    object: { type: 'string', enum: ['tool', 'specialist', 'gateway'] },
    deleted: { type: 'boolean', const: true },
  }),
  AdminUserErasure: object({
    object: { type: 'string', const: 'user.erasure' },
    organization: object({ id: { type: 'string', format: 'uuid' }, slug: { type: 'string' } }),
    userId: { type: 'string' },
    deleted: object({
      conversations: { type: 'integer' },
      responses: { type: 'integer' },
      messages: { type: 'integer' },
      claims: { type: 'integer' },
      memoryItems: { type: 'integer' },
      memoryOptOuts: { type: 'integer' },
      files: { type: 'integer', description: '`user_data` files only' },
    }),
  }),
  ApplyDocument: anyObject(
    'The document `apply -f` reads (docs/admin-cli.md, "File format"), as JSON: `organizations[]` with ' +
      'their tools, plugins, assistants, specialists and gateways',
  ),
  ApplyReport: object({
    dryRun: { type: 'boolean' },
    changes: {
      type: 'array',
      items: object({
        kind: {
          type: 'string',
          description: '`organization`, `tool`, `plugin`, `assistant`, `specialist`, `gateway`',
        },
        key: { type: 'string', description: 'How the document names it: `acme`, `acme/Support`' },
        id: { type: 'string' },
        action: { type: 'string', enum: ['created', 'updated', 'unchanged', 'deleted'] },
      }),
    },
    summary: object(
      {
        created: { type: 'integer' },
        updated: { type: 'integer' },
        unchanged: { type: 'integer' },
        deleted: { type: 'integer', description: 'Only with `prune`' },
      },
      ['created', 'updated', 'unchanged'],
    ),
  }),
  AuditLogEntry: object({
    id: { type: 'string', format: 'uuid' },
    organizationId: nullable({ type: 'string', format: 'uuid' }),
    actor: object({
      type: { type: 'string', enum: ['api_key', 'oidc', 'cli'] },
      id: {
        type: 'string',
        description: "The key id, the token subject, or the CLI's operating-system user",
      },
      issuer: nullable({ type: 'string', description: "The token's issuer (`oidc`)" }),
    }),
    action: {
      type: 'string',
      description:
        "`created`, `updated`, `revoked`, `deleted` (`apply` with `prune`), `erased` (an end user's data; " +
        '`resourceId` is `sha256:` of `<organization id>:<user id>`), `denied` (a refused request: 403 or 404)',
    },
    resourceType: { type: 'string' },
    resourceId: { type: 'string' },
    before: nullable(anyObject('The resource before the change; never a secret or key hash')),
    after: nullable(anyObject('The resource after the change (for `apply`: its key in the document)')),
    requestId: nullable({
      type: 'string',
      description: "The id the server gave the request (not the client's own)",
    }),
    clientRequestId: nullable({ type: 'string', description: 'The `x-request-id` the client sent, if any' }),
    createdAt: dateTime,
  }),
  AuditLogPage: object({
    object: { type: 'string', const: 'list' },
    data: { type: 'array', items: ref('AuditLogEntry') },
    next_cursor: nullable({ type: 'string', description: 'Pass it as `after` for the next page' }),
  }),
};

const operation = (spec: Omit<OperationSpec, 'tag' | 'access'>): OperationSpec => ({
  ...spec,
  tag: TAG,
  access: ADMIN,
});

export const ADMIN_OPERATIONS: readonly OperationSpec[] = [
  operation({
    method: 'get',
    paths: ['/admin/v1/organizations'],
    operationId: 'adminListOrganizations',
    summary: 'Organizations: all of them for a platform administrator, its own for an admin key',
    responses: { '200': json(list('AdminOrganization'), 'The organizations') },
    errors: [],
  }),
  operation({
    method: 'get',
    paths: ['/admin/v1/organizations/{org}'],
    operationId: 'adminGetOrganization',
    summary: 'One organization',
    parameters: [ORG],
    responses: { '200': json(ref('AdminOrganization'), 'The organization') },
    errors: ['not_found'],
  }),
  operation({
    method: 'put',
    paths: ['/admin/v1/organizations/{org}'],
    operationId: 'adminPutOrganization',
    summary: 'Create (platform administrators) or update the organization with this slug',
    description:
      'An admin key updates its own organization only (by slug or id) and may only rename it: another slug is 403, ' +
      'and so is any platform-only field (`rateLimitPerMinute`, `monthlyTokenBudget`, `secretEnvGrants`, ' +
      '`ssrfAllowlist`, `embeddings`), with a value or null. `embeddings` is set with apply only (400 here for ' +
      'platform administrators). Slugs shaped like a UUID are refused.',
    parameters: [pathParam('org', 'The slug (or, to update, the id)')],
    requestBody: jsonBody(ref('AdminOrganizationInput')),
    responses: { '200': json(withAction('AdminOrganization'), 'The organization and what was done') },
    errors: ['not_found', 'insufficient_scope'],
  }),
  operation({
    method: 'get',
    paths: ['/admin/v1/organizations/{org}/assistants'],
    operationId: 'adminListAssistants',
    summary: "The organization's assistants",
    parameters: [ORG],
    responses: { '200': json(list('AdminAssistant'), 'The assistants') },
    errors: ['not_found'],
  }),
  operation({
    method: 'get',
    paths: ['/admin/v1/organizations/{org}/assistants/{assistant}'],
    operationId: 'adminGetAssistant',
    summary: 'One assistant',
    parameters: [ORG, ASSISTANT],
    responses: { '200': json(ref('AdminAssistant'), 'The assistant') },
    errors: ['not_found', 'assistant_not_found', 'invalid_request'],
  }),
  operation({
    method: 'put',
    paths: ['/admin/v1/organizations/{org}/assistants/{assistant}'],
    operationId: 'adminPutAssistant',
    summary: 'Create or update the assistant of this name (fields left out keep their value)',
    parameters: [ORG, pathParam('assistant', 'The assistant name')],
    requestBody: jsonBody(ref('AdminAssistantInput')),
    responses: { '200': json(withAction('AdminAssistant'), 'The assistant and what was done') },
    errors: ['not_found', 'insufficient_scope', 'quota_exceeded'],
  }),
  operation({
    method: 'get',
    paths: ['/admin/v1/organizations/{org}/assistants/{assistant}/specialists'],
    operationId: 'adminListSpecialists',
    summary: "The assistant's specialists",
    parameters: [ORG, ASSISTANT],
    responses: { '200': json(list('AdminSpecialist'), 'The specialists') },
    errors: ['not_found', 'assistant_not_found', 'invalid_request'],
  }),
  operation({
    method: 'put',
    paths: ['/admin/v1/organizations/{org}/assistants/{assistant}/specialists/{name}'],
    operationId: 'adminPutSpecialist',
    summary: 'Create or update the specialist of this name',
    parameters: [ORG, ASSISTANT, pathParam('name', 'The specialist name')],
    requestBody: jsonBody(ref('AdminSpecialistInput')),
    responses: { '200': json(withAction('AdminSpecialist'), 'The specialist and what was done') },
    errors: ['not_found', 'assistant_not_found', 'insufficient_scope', 'quota_exceeded'],
  }),
  operation({
    method: 'delete',
    paths: ['/admin/v1/organizations/{org}/assistants/{assistant}/specialists/{name}'],
    operationId: 'adminDeleteSpecialist',
    summary: 'Delete the specialist (audited as `deleted`)',
    parameters: [ORG, ASSISTANT, pathParam('name', 'The specialist name')],
    responses: { '200': json(ref('AdminDeleted'), 'What was deleted') },
    errors: ['not_found', 'assistant_not_found'],
  }),
  operation({
    method: 'get',
    paths: ['/admin/v1/organizations/{org}/upstream-targets'],
    operationId: 'adminListUpstreamTargets',
    summary:
      "Every upstream target of the organization's assistants and specialists, with its circuit breaker",
    parameters: [ORG],
    responses: { '200': json(list('AdminUpstreamTarget'), 'The targets, in declared order per agent') },
    errors: ['not_found'],
  }),
  operation({
    method: 'get',
    paths: ['/admin/v1/organizations/{org}/responses/{response}/upstream-attempts'],
    operationId: 'adminListUpstreamAttempts',
    summary: "The upstream targets a stored response's model calls tried, in order",
    parameters: [ORG, pathParam('response', 'The response id (`resp_<uuid>` or bare)')],
    responses: {
      '200': json(
        object({
          object: { type: 'string', enum: ['list'] },
          response_status: { type: 'string' },
          data: { type: 'array', items: ref('AdminUpstreamAttempt') },
        }),
        "The attempts (empty for the offline model), with the response's status",
      ),
    },
    errors: ['not_found', 'response_not_found'],
  }),
  operation({
    method: 'get',
    paths: ['/admin/v1/organizations/{org}/tools'],
    operationId: 'adminListTools',
    summary: "The organization's tool catalogue",
    parameters: [ORG],
    responses: { '200': json(list('AdminTool'), 'The tools') },
    errors: ['not_found'],
  }),
  operation({
    method: 'put',
    paths: ['/admin/v1/organizations/{org}/tools/{name}'],
    operationId: 'adminPutTool',
    summary: 'Create or update the tool of this name',
    parameters: [ORG, pathParam('name', 'The tool name')],
    requestBody: jsonBody(ref('AdminToolInput')),
    responses: { '200': json(withAction('AdminTool'), 'The tool and what was done') },
    errors: ['not_found', 'insufficient_scope', 'quota_exceeded'],
  }),
  operation({
    method: 'delete',
    paths: ['/admin/v1/organizations/{org}/tools/{name}'],
    operationId: 'adminDeleteTool',
    summary: 'Delete the tool (audited as `deleted`); names that referred to it are skipped',
    parameters: [ORG, pathParam('name', 'The tool name')],
    responses: { '200': json(ref('AdminDeleted'), 'What was deleted') },
    errors: ['not_found'],
  }),
  operation({
    method: 'get',
    paths: ['/admin/v1/organizations/{org}/gateways'],
    operationId: 'adminListGateways',
    summary: "The organization's MCP gateways",
    parameters: [ORG],
    responses: { '200': json(list('AdminGateway'), 'The gateways') },
    errors: ['not_found'],
  }),
  operation({
    method: 'put',
    paths: ['/admin/v1/organizations/{org}/gateways/{name}'],
    operationId: 'adminPutGateway',
    summary: 'Create or update the gateway of this name (names are unique within the organization)',
    parameters: [ORG, pathParam('name', 'The gateway name')],
    requestBody: jsonBody(ref('AdminGatewayInput')),
    responses: { '200': json(withAction('AdminGateway'), 'The gateway and what was done') },
    errors: ['not_found', 'quota_exceeded'],
  }),
  operation({
    method: 'delete',
    paths: ['/admin/v1/organizations/{org}/gateways/{name}'],
    operationId: 'adminDeleteGateway',
    summary: 'Delete the gateway (audited as `deleted`)',
    parameters: [ORG, pathParam('name', 'The gateway name')],
    responses: { '200': json(ref('AdminDeleted'), 'What was deleted') },
    errors: ['not_found'],
  }),
  operation({
    method: 'get',
    paths: ['/admin/v1/organizations/{org}/keys'],
    operationId: 'adminListApiKeys',
    summary: "The organization's API keys, revoked ones included; never a secret",
    parameters: [ORG],
    responses: { '200': json(list('AdminApiKey'), 'The keys') },
    errors: ['not_found'],
  }),
  operation({
    method: 'post',
    paths: ['/admin/v1/organizations/{org}/keys'],
    operationId: 'adminCreateApiKey',
    summary: 'Issue a key; the answer carries the secret, this once',
    parameters: [ORG],
    requestBody: jsonBody(ref('AdminApiKeyInput')),
    responses: { '201': json(ref('AdminApiKeyCreated'), 'The key and its secret') },
    errors: ['not_found', 'quota_exceeded'],
  }),
  operation({
    method: 'post',
    paths: ['/admin/v1/organizations/{org}/keys/{keyId}/revoke'],
    operationId: 'adminRevokeApiKey',
    summary: 'Revoke a key (refused everywhere within `API_KEY_CACHE_TTL_SECONDS`)',
    parameters: [ORG, pathParam('keyId', 'The key id')],
    responses: { '200': json(ref('AdminApiKey'), 'The revoked key') },
    errors: ['not_found'],
  }),
  operation({
    method: 'delete',
    paths: ['/admin/v1/organizations/{org}/users/{userId}'],
    operationId: 'adminEraseUser',
    summary: 'Erase every trace of one end user in the organization (`users erase`), audited as `erased`',
    description:
      "In one transaction: the user's conversations, responses and messages, claims, memory items and " +
      'opt-outs and `user_data` files; usage totals stay (folded into anonymous usage). The audit row names ' +
      'the user by a digest, never by the id. Irreversible; a second call deletes nothing.',
    parameters: [
      ORG,
      pathParam('userId', 'The end-user id, exactly as sent in `x-user-id` (1 to 256 characters)'),
    ],
    responses: { '200': json(ref('AdminUserErasure'), 'How many rows of each kind were deleted') },
    errors: ['invalid_request', 'not_found'],
  }),
  operation({
    method: 'post',
    paths: ['/admin/v1/apply'],
    operationId: 'adminApply',
    summary: 'Apply a configuration document, as `apply -f` does, in one transaction',
    description:
      'The same document and report as the CLI (without `file`). An admin key may only name its own ' +
      'organization and may not state a platform-only field (`rateLimitPerMinute`, `monthlyTokenBudget`, ' +
      '`secretEnvGrants`, `ssrfAllowlist`, `embeddings`, even null: 403). `apiKeys` are refused here (issue keys with ' +
      '`POST /admin/v1/organizations/{org}/keys`).',
    parameters: [
      query('dry_run', 'Report what would change and change nothing', { type: 'boolean', default: false }),
      query(
        'prune',
        '`apply --prune`: also delete what the document no longer declares, within the organizations and lists it states',
        {
          type: 'boolean',
          default: false,
        },
      ),
    ],
    requestBody: jsonBody(ref('ApplyDocument')),
    responses: { '200': json(ref('ApplyReport'), 'What was (or would be) done, item by item') },
    errors: ['not_found', 'quota_exceeded'],
  }),
  operation({
    method: 'get',
    paths: ['/admin/v1/audit-log'],
    operationId: 'adminAuditLog',
    summary: 'Changes made through the admin API, newest first',
    description:
      "An admin key sees its organization's rows only; `organization` narrows a platform administrator's view.",
    parameters: [
      query('organization', 'Only this organization (slug or id)', { type: 'string' }),
      query('limit', 'Rows per page (default 50)', {
        type: 'integer',
        minimum: 1,
        maximum: 100,
        default: 50,
      }),
      query('after', 'The `next_cursor` of the previous page (opaque)', { type: 'string' }),
    ],
    responses: { '200': json(ref('AuditLogPage'), 'One page of the audit log') },
    errors: ['not_found'],
  }),
];

export const ADMIN_TAG = {
  name: TAG,
  description:
    'Manage organizations, assistants, tools, gateways and keys (an `admin` key: its organization; a platform ' +
    'administrator token: every organization). Every change is in the audit log.',
};
