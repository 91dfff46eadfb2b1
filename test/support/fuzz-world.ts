import { ApiKeysService } from '../../src/api-keys/api-keys.service.js';
import { OrganizationsService } from '../../src/organizations/organizations.service.js';
import { call } from './http.js';
import { INITIALIZE } from './mcp-gateway-fixtures.js';
import type { RecordingApi } from './mcp-gateway-fixtures.js';
import type { SeededOrganization, TestApp } from './test-app.js';

/** The platform administrators' group the fuzz suites' service is configured with. */
export const FUZZ_ADMIN_GROUP = '/platform/admins';
/** The audience of the platform administrators' tokens (never the gateway's). */
export const FUZZ_ADMIN_AUDIENCE = 'switchboard-admin';

export interface FuzzWorld {
  /** Values a careful client would put in each path parameter and in queries. */
  valid: Record<string, string[]>;
  /** Valid bodies for an OpenAPI path (with its `{parameters}`), to mutate from. */
  bodiesFor(path: string): unknown[];
}

/**
 * Something to read, update and delete on every route: a claim, a stored response, a chat
 * history conversation, an API conversation, and admin objects (a tool, a gateway, a specialist,
 * a key to revoke), so that generated requests get past "not found" into the routes.
 */
export async function seedFuzzWorld(
  app: TestApp,
  org: SeededOrganization,
  api: RecordingApi,
): Promise<FuzzWorld> {
  const asst = `asst_${org.assistantId}`;
  const key = org.keys.full_access;
  const user = { 'x-user-id': 'fz' };
  await call(app.baseUrl, 'POST', '/v1/user-claims', {
    key,
    body: { userId: 'fz', claimKey: 'plan', claimValue: { tier: 'gold' } },
  });
  const turn = await call(app.baseUrl, 'POST', '/v1/responses', {
    key,
    headers: user,
    body: { model: asst, input: 'hello' },
  });
  const history = await call(app.baseUrl, 'GET', '/v1/chat/history/conversations', { key, headers: user });
  const conversation = await call(app.baseUrl, 'POST', '/v1/conversations', {
    key,
    headers: user,
    body: { items: [{ type: 'message', role: 'user', content: 'hi' }], metadata: { a: 'b' } },
  });
  const items = await call(app.baseUrl, 'GET', `/v1/conversations/${conversation.body.id}/items`, {
    key,
    headers: user,
  });
  const adminKey = { authorization: `Bearer ${org.keys.admin}` };
  const admin = (path: string, body: unknown) =>
    call(app.baseUrl, 'PUT', `/admin/v1/organizations/${org.slug}${path}`, { headers: adminKey, body });
  const tool = {
    kind: 'rest',
    description: 'Status of an order',
    config: {
      method: 'GET',
      urlTemplate: `${api.url}/orders/{id}`,
      parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
    },
  };
  const assistant = { instructions: 'Be brief.', model: { provider: 'offline' }, tools: ['fuzz_orders'] };
  const specialist = { role: 'Invoices', instructions: 'Answer invoices.', tools: [] };
  const gateway = { tools: ['fuzz_orders'] };
  // The tool's host is on loopback: the platform allows it for this organization (docs/admin-api.md).
  await app.running.app.get(OrganizationsService).setSsrfAllowlist(org.id, ['127.0.0.1']);
  for (const [path, body] of [
    ['/tools/fuzz_orders', tool],
    ['/assistants/Fuzzy', assistant],
    ['/assistants/Fuzzy/specialists/billing', specialist],
    ['/gateways/fuzz-ide', gateway],
  ] as const) {
    const reply = await admin(path, body);
    if (reply.status >= 300)
      throw new Error(`seeding ${path}: ${reply.status} ${JSON.stringify(reply.body)}`);
  }
  const spare = await app.running.app.get(ApiKeysService).create(org.id, 'spare', ['user']);
  const knowledge = await seedKnowledge(app.baseUrl, key);

  const valid: Record<string, string[]> = {
    userId: ['fz', 'nobody'],
    claimKey: ['plan', 'none'],
    id: [turn.body.id, history.body[0].id, conversation.body.id, `resp_${org.assistantId}`],
    itemId: [items.body.data?.[0]?.id ?? 'msg_1', org.assistantId, 'mem_1'],
    name: ['acme-ide', 'globex-ide', 'fuzz-ide', 'fuzz_orders', 'billing', 'nope'],
    org: [org.slug, org.id, 'acme', 'globex', 'fuzz-new'],
    assistant: ['Fuzzy', org.assistantId, asst, 'nope'],
    keyId: [spare.key.id, 'nope'],
    fileId: [knowledge.fileId, 'file-nope'],
    vectorStoreId: [knowledge.vectorStoreId, 'vs_nope'],
    batchId: [knowledge.batchId, 'vsfb_nope'],
    query: [asst, '1', '100', 'abc', 'true', org.slug, history.body[0].id],
  };
  const bodies: [RegExp, unknown[]][] = [
    [
      /^\/mcp-gateway/,
      [
        INITIALIZE,
        {
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'order_status', arguments: { id: '7' } },
        },
      ],
    ],
    [
      /\/bulk$/,
      [
        {
          claims: [
            { userId: 'fz', claimKey: 'a', claimValue: 1 },
            { userId: 'fy', claimKey: 'b', claimValue: 'x' },
          ],
        },
      ],
    ],
    [/user-claims$/, [{ userId: 'fz', claimKey: 'k', claimValue: { a: [1, 'x', null] } }]],
    [
      /^\/v1\/responses(\/compact)?$/,
      [
        { model: asst, input: 'hi' },
        {
          model: asst,
          input: [{ role: 'user', content: [{ type: 'input_text', text: 'hi' }] }],
          instructions: 'Be brief.',
          metadata: { a: 'b' },
        },
        {
          model: asst,
          input: 'stream it',
          stream: true,
          tools: [{ type: 'function', name: 'f', parameters: {} }],
        },
      ],
    ],
    [
      /^\/v1\/conversations$/,
      [{ items: [{ type: 'message', role: 'user', content: 'hi' }], metadata: { a: 'b' } }],
    ],
    [/^\/v1\/conversations\/\{id\}$/, [{ metadata: { topic: 'x' } }]],
    [
      /^\/v1\/conversations\/\{id\}\/items$/,
      [{ items: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'more' }] }] }],
    ],
    [
      /\/apply$/,
      [
        {
          organizations: [
            { slug: org.slug, name: 'Fuzz applied', tools: [{ name: 'fuzz_orders', ...tool }] },
          ],
        },
      ],
    ],
    [/\/keys$/, [{ name: 'fuzzed', scopes: ['user', 'assistant'] }]],
    [/\/specialists\/\{name\}$/, [specialist]],
    [/\/assistants\/\{assistant\}$/, [assistant]],
    [/\/tools\/\{name\}$/, [tool]],
    [/\/gateways\/\{name\}$/, [gateway, { tools: ['*'] }]],
    [/^\/v1\/vector_stores$/, [{ name: 'fuzz', metadata: { a: 'b' }, file_ids: [knowledge.fileId] }]],
    [/^\/v1\/vector_stores\/\{vectorStoreId\}$/, [{ name: 'renamed', metadata: { a: 'c' } }]],
    [/\/file_batches$/, [{ file_ids: [knowledge.fileId], attributes: { team: 'a' } }]],
    [
      /^\/v1\/vector_stores\/\{vectorStoreId\}\/files$/,
      [
        {
          file_id: knowledge.fileId,
          attributes: { team: 'a', year: 2026 },
          chunking_strategy: {
            type: 'static',
            static: { max_chunk_size_tokens: 200, chunk_overlap_tokens: 50 },
          },
        },
      ],
    ],
    [/^\/v1\/vector_stores\/\{vectorStoreId\}\/files\/\{fileId\}$/, [{ attributes: { team: 'b' } }]],
    [
      /\/search$/,
      [{ query: 'refund policy', max_num_results: 3, filters: { type: 'eq', key: 'team', value: 'a' } }],
    ],
    [/^\/admin\/v1\/organizations\/\{org\}$/, [{ name: 'Fuzz' }, { name: 'Fuzz', rateLimitPerMinute: null }]],
  ];
  return {
    valid,
    bodiesFor: (path) => bodies.find(([pattern]) => pattern.test(path))?.[1] ?? [{}],
  };
}

/** A file in a vector store, and a batch of it, for the vector store routes (docs/knowledge.md). */
async function seedKnowledge(
  baseUrl: string,
  key: string,
): Promise<{ fileId: string; vectorStoreId: string; batchId: string }> {
  const form = new FormData();
  form.append('purpose', 'assistants');
  form.append('file', new Blob(['Refunds are paid within 14 days.'], { type: 'text/plain' }), 'policy.txt');
  const upload = await fetch(`${baseUrl}/v1/files`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  const file = (await upload.json()) as { id: string };
  const store = await call(baseUrl, 'POST', '/v1/vector_stores', { key, body: { name: 'fuzz-kb' } });
  const batch = await call(baseUrl, 'POST', `/v1/vector_stores/${store.body.id}/file_batches`, {
    key,
    body: { file_ids: [file.id] },
  });
  if (!file.id || store.status >= 300 || batch.status >= 300)
    throw new Error(`seeding vector stores: ${upload.status} ${store.status} ${batch.status}`);
  return { fileId: file.id, vectorStoreId: store.body.id, batchId: batch.body.id };
}
