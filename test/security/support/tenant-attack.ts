import type { TestApp } from '../../support/test-app.js';

/**
 * Secrets of the service's environment in the attack suite: platform variables and a key the
 * platform keeps for its own models. None may ever reach a host an organization's admin named.
 */
export const SERVICE_SECRETS: Record<string, string> = {
  METRICS_TOKEN: 'metrics-token-secret-3141',
  OTEL_EXPORTER_OTLP_HEADERS: 'authorization=otel-secret-2718',
  OIDC_CLIENT_SECRET: 'oidc-client-secret-1618',
  PLATFORM_SHARED_KEY: 'sk-platform-shared-1414',
};

/** A key the platform grants to one organization (`orgs grant-secrets`). */
export const GRANTED = { name: 'ACME_LLM_KEY', value: 'sk-acme-granted-1732' };
export const TOOL_SECRET = { name: 'ACME_TOOL_KEY', value: 'tool-secret-value-2236' };

/** Variable names an attacker tries (the database's too: set when the suite runs on PostgreSQL). */
export const ATTACKED_NAMES = ['DATABASE_URL', 'REDIS_URL', ...Object.keys(SERVICE_SECRETS)];

/** Every value that must never leave, including the database URL when there is one. */
export function forbiddenValues(app: TestApp): string[] {
  return [...Object.values(SERVICE_SECRETS), app.database.env.DATABASE_URL].filter(
    (value): value is string => typeof value === 'string' && value.length > 0,
  );
}

/** Non-public destinations: loopback, private, link-local (cloud metadata), IPv6 loopback, a name for loopback. */
export function privateOrigins(port: number): string[] {
  return [
    `http://127.0.0.1:${port}`,
    'http://10.0.0.7',
    'http://169.254.169.254',
    `http://[::1]:${port}`,
    `http://localhost:${port}`,
  ];
}

/** Each env-referencing field an admin can write, as [label, PUT path under the organization, body]. */
export function envFieldAttacks(name: string, origin: string, assistantName: string) {
  const model = { provider: 'openai-compatible', baseUrl: `${origin}/v1`, model: 'm', apiKeyEnv: name };
  const rest = (extra: object) => ({
    kind: 'rest',
    config: { method: 'GET', urlTemplate: `${origin}/x`, ...extra },
  });
  return [
    ['model.apiKeyEnv', `/assistants/leak`, { model }],
    [
      'model.apiKeyEnv',
      `/assistants/${encodeURIComponent(assistantName)}/specialists/leak`,
      { role: 'r', model },
    ],
    ['config.headers.x-leak.fromEnv', '/tools/leak', rest({ headers: { 'x-leak': { fromEnv: name } } })],
    ['config.auth.env', '/tools/leak', rest({ auth: { type: 'env', env: name } })],
    [
      'config.headers.x-leak.fromEnv',
      '/tools/leak',
      { kind: 'mcp', config: { url: `${origin}/mcp`, headers: { 'x-leak': { fromEnv: name } } } },
    ],
    [
      'config.apiKeyEnv',
      '/tools/leak',
      { kind: 'web_search', config: { provider: 'brave', baseUrl: origin, apiKeyEnv: name } },
    ],
  ] as const;
}

/** Each URL field an admin can write, pointed at `origin`. */
export function urlFieldAttacks(origin: string, assistantName: string) {
  const model = { provider: 'openai-compatible', baseUrl: `${origin}/v1`, model: 'm' };
  return [
    ['model.baseUrl', '/assistants/reach', { model }],
    [
      'model.baseUrl',
      `/assistants/${encodeURIComponent(assistantName)}/specialists/reach`,
      { role: 'r', model },
    ],
    [
      'config.urlTemplate',
      '/tools/reach',
      {
        kind: 'rest',
        config: {
          urlTemplate: `${origin}/x/{id}`,
          parameters: { type: 'object', properties: { id: { type: 'string' } } },
        },
      },
    ],
    ['config.url', '/tools/reach', { kind: 'mcp', config: { url: `${origin}/mcp` } }],
    [
      'config.baseUrl',
      '/tools/reach',
      { kind: 'web_search', config: { provider: 'searxng', baseUrl: origin } },
    ],
  ] as const;
}

/** The same write as an `apply` document entry of organization `slug`. */
export function asApplyDocument(
  slug: string,
  path: string,
  body: Record<string, unknown>,
  assistantName: string,
) {
  const [, collection, name, sub, subName] = path.split('/');
  if (collection === 'tools') return { organizations: [{ slug, tools: [{ name, ...body }] }] };
  if (sub === 'specialists') {
    return {
      organizations: [
        { slug, assistants: [{ name: assistantName, specialists: [{ name: subName, ...body }] }] },
      ],
    };
  }
  return { organizations: [{ slug, assistants: [{ name, ...body }] }] };
}

/** Everything an organization's admin can change, as rows: compared before and after an attack. */
export async function snapshot(app: TestApp, organizationId: string): Promise<unknown> {
  const query = (sql: string) => app.dataSource.query(sql, [organizationId]);
  return {
    organizations: await query('SELECT * FROM organizations WHERE id = $1'),
    count: await app.dataSource.query('SELECT count(*)::int AS n FROM organizations'),
    assistants: await query('SELECT * FROM assistants WHERE organization_id = $1 ORDER BY id'),
    specialists: await query('SELECT * FROM specialists WHERE organization_id = $1 ORDER BY id'),
    tools: await query('SELECT * FROM tools WHERE organization_id = $1 ORDER BY id'),
  };
}

/** Tables (of the public schema) whose rows contain `text` anywhere. */
export async function tablesContaining(app: TestApp, text: string): Promise<string[]> {
  const tables: { table_name: string }[] = await app.dataSource.query(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
  );
  const found: string[] = [];
  for (const { table_name } of tables) {
    const [{ n }] = await app.dataSource.query(
      `SELECT count(*)::int AS n FROM "${table_name}" t WHERE to_jsonb(t)::text LIKE '%' || $1 || '%'`,
      [text],
    );
    if (n > 0) found.push(table_name);
  }
  return found;
}
