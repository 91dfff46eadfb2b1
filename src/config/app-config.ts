import { isIP } from 'node:net';
import { resolve } from 'node:path';

/**
 * Typed configuration, grouped by concern. Every variable is read here and nowhere else;
 * `.env.example` documents each one. A bad value stops the boot with a message naming it.
 */
export interface AppConfig {
  server: {
    host: string;
    port: number;
    bodyLimitBytes: number;
    /** Largest request line plus headers Node's HTTP parser accepts; beyond it, 431. */
    maxHeaderBytes: number;
    /** Public origin of this backend, used in absolute URLs when set. */
    publicBaseUrl: string | undefined;
    trustProxy: boolean;
    /**
     * How long an idle client connection stays open. Above the idle timeout of the proxies in
     * front (60 s for most load balancers), so a proxy never reuses a connection the service is
     * closing at that moment: Node's own 5 s makes that race answer some requests with a reset.
     */
    keepAliveTimeoutMs: number;
  };
  database: {
    /** Unset means the embedded database. */
    url: string | undefined;
    embeddedDataDir: string;
    poolMax: number;
    runMigrationsOnBoot: boolean;
    /**
     * How often the embedded database's tables are checked for a VACUUM or ANALYZE that is due
     * (it has no autovacuum); 0 turns it off. Unused on PostgreSQL.
     */
    embeddedMaintenanceMs: number;
  };
  auth: {
    apiKeyCacheTtlMs: number;
  };
  quickstart: {
    enabled: boolean;
  };
  /** The web console under /console (docs/console.md): static files, on by default. */
  console: {
    enabled: boolean;
    /**
     * CONSOLE_OIDC_CLIENT_ID: the identity provider's public client (no secret, PKCE S256, redirect
     * URI the console's own `…/console/`) with which platform administrators sign in to the console;
     * only with OIDC_ISSUER and ADMIN_GROUP. Unset: a platform token is pasted instead.
     */
    oidcClientId: string | undefined;
    /** CONSOLE_OIDC_SCOPE: the scopes the console asks for (default `openid`). */
    oidcScope: string;
  };
  /** Upstream model calls: deadlines, retries and their budget (docs/resilience.md). */
  upstream: {
    /** Connect plus response headers, per attempt (capped by the first-token deadline). */
    headersTimeoutMs: number;
    /** From an attempt's start to its first output (text, reasoning or a tool call). */
    firstTokenTimeoutMs: number;
    /** Longest silence between chunks once output has started. */
    stallTimeoutMs: number;
    maxRetries: number;
    /** All attempts and waits before the first output of a model call fit in this time. */
    retryBudgetMs: number;
    /** A model call's every target and retry start within this, unless its assistant says otherwise. */
    failoverBudgetMs: number;
    /** Failed calls in a row that open a target's circuit breaker (0: no breakers). */
    breakerFailures: number;
    /** How long an open breaker keeps its target at the back of the order before a probe. */
    breakerCooldownMs: number;
    /** Upstream clients (each a connection pool) a replica keeps; the least recently used beyond it is closed. */
    maxClients: number;
    /** Where assistants' `apiKeyEnv` names are looked up (the process environment). */
    keyEnvironment: Readonly<Record<string, string | undefined>>;
  };
  streaming: {
    heartbeatMs: number;
  };
  turns: {
    /** Model calls per turn, counting each server-tool round and handover. */
    maxIterations: number;
    maxHandovers: number;
  };
  /** Running turns' lease, background turns and resumable streams (docs/operations.md). */
  durableTurns: {
    /** A running turn whose owner has not renewed it for this long is marked failed. */
    leaseMs: number;
    /** How often a replica renews the leases of its turns and notices cancellations. */
    renewMs: number;
    /** How often a replica looks for expired leases (of any replica) and old events. */
    sweepMs: number;
    /** Background turns one replica runs at once; more wait as `queued`. */
    maxRunningBackground: number;
    /** Background turns that may wait on one replica; beyond, 503 service_overloaded. */
    maxQueuedBackground: number;
    /** What one organization may run of BACKGROUND_MAX_RUNNING; its other turns wait. */
    maxRunningBackgroundPerOrganization: number;
    /** What one organization may have waiting; beyond, 429 concurrency_limit_exceeded. */
    maxQueuedBackgroundPerOrganization: number;
    /** How often a background turn's new events are written (one statement per flush). */
    eventFlushMs: number;
    /** How often a stream resumed on another replica than the owner reads new events. */
    followPollMs: number;
    /** While nothing new arrives, that interval doubles up to this. */
    followPollMaxMs: number;
    /** How long a finished background turn's events can still be replayed. */
    eventRetentionMs: number;
  };
  conversations: {
    idleAfterMs: number;
  };
  memory: {
    contextBudgetChars: number;
  };
  oidc: {
    /** The identity provider's issuer URL; unset turns the MCP gateway off. */
    issuer: string | undefined;
    /** The backend's client id, an accepted access-token audience. */
    clientId: string | undefined;
    extraAudiences: string[];
    validateAudience: boolean;
    /** Claim holding full group paths (`/acme/engineering`); a dotted name reaches a nested claim. */
    groupsClaim: string;
    clockSkewSeconds: number;
    jwksCacheMs: number;
    /** Full group path (`/platform/admins`) whose members administer every organization; unset: none. */
    adminGroup: string | undefined;
    /**
     * ADMIN_AUDIENCE: the `aud` an administrator token must carry on /admin/v1, distinct from the
     * gateway's (OIDC_CLIENT_ID, OIDC_EXTRA_AUDIENCES); required with ADMIN_GROUP and OIDC_ISSUER.
     */
    adminAudience: string | undefined;
  };
  mcpGateway: {
    /** Origin MCP clients are configured with (it proxies /mcp-gateway/*); metadata URLs use it. */
    publicAdminOrigin: string | undefined;
    /** Browser origins allowed to call the gateway; requests without `Origin` are always allowed. */
    allowedOrigins: string[];
    scopesSupported: string[];
  };
  limits: {
    /** Requests per minute for an organization without a limit of its own; 0 = unlimited. */
    defaultPerMinute: number;
    /** Shared counters for all replicas; unset keeps them in this process. */
    redisUrl: string | undefined;
    /** Namespace of this deployment's keys in a shared Redis. */
    redisKeyPrefix: string;
    /** How long an organization's limit is remembered; a change applies within this time. */
    organizationCacheTtlMs: number;
    /** Responses (JSON or streams) one replica serves at once; beyond it, 503 service_overloaded. */
    maxInFlightResponses: number;
    /** What one organization may hold of that cap; beyond it, 429 concurrency_limit_exceeded. */
    maxInFlightPerOrganization: number;
    /** Admin API requests per minute of one platform administrator (organization keys use their organization's limit). */
    adminPerMinute: number;
  };
  /** Stored objects per organization (0 = no limit); beyond, 409 quota_exceeded (docs/operations.md). */
  quotas: {
    assistantsPerOrganization: number;
    specialistsPerAssistant: number;
    toolsPerOrganization: number;
    gatewaysPerOrganization: number;
    apiKeysPerOrganization: number;
    itemsPerConversation: number;
  };
  metrics: {
    /** When set, GET /metrics needs `Authorization: Bearer <token>`. */
    token: string | undefined;
    /** METRICS_PUBLIC: without a token, /metrics is open only when this is true (default: 401). */
    public: boolean;
  };
  lifecycle: {
    /** Pause between readiness turning false and closing the listener, for load balancers. */
    shutdownDelayMs: number;
    /** How long requests in flight may run after the listener closes; then streams are ended. */
    shutdownGraceMs: number;
  };
  tools: {
    /** SSRF_ALLOWLIST: addresses and hosts server tools may reach although they are not public. */
    ssrfAllowlist: SsrfAllowlist;
    /** Default time a server tool may take (a tool may set its own). */
    timeoutMs: number;
    /** Largest tool output passed to the model; longer output is cut and marked. */
    maxOutputBytes: number;
    /** How long an MCP server's tool list is reused; 0 lists on every turn. */
    mcpToolsCacheMs: number;
    mcpToolsCacheMaxEntries: number;
    /** Where tools' `fromEnv` / `apiKeyEnv` / `env` names are looked up (the process environment). */
    secretEnvironment: Readonly<Record<string, string | undefined>>;
  };
  /** Images and files in user messages (input_image / input_file parts). */
  inputs: {
    /** Largest image, decoded, whether sent inline or fetched from its URL. */
    maxImageBytes: number;
    /** Largest file, decoded, whether sent inline or fetched from its URL. */
    maxFileBytes: number;
    /** How long fetching one image_url / file_url may take. */
    urlTimeoutMs: number;
  };
  /** The Files API (docs/knowledge.md). */
  files: {
    /** Largest file one upload may carry (multipart, independent of BODY_LIMIT). */
    maxBytes: number;
    /** Bytes all of one organization's stored files may take together. */
    organizationMaxBytes: number;
  };
  /** Vector stores and their ingestion (docs/knowledge.md). */
  /** Usage rollups (docs/usage.md, "Freshness"). */
  usage: {
    /** How often a replica adds its turns' usage to the rollups (reads on the replica add it first). */
    flushMs: number;
    /** Usage pending this long is added by any replica: the one that wrote it stopped before its flush. */
    orphanAfterMs: number;
  };
  vectorStores: {
    /** How often a replica looks for files to ingest (an attach on this replica starts at once). */
    ingestPollMs: number;
    /** The longest wait between two looks while the queue stays empty (the wait doubles up to it). */
    ingestPollMaxMs: number;
    /** How long a replica holds a file it ingests before another replica may take it over. */
    ingestLeaseMs: number;
    /** Stores one organization may hold (0 = no limit). */
    perOrganization: number;
    /** Files one store may hold (0 = no limit). */
    filesPerStore: number;
  };
  logging: {
    level: LogLevel;
  };
  tracing: TracingConfig;
}

/** OpenTelemetry traces, from the standard OTEL_* variables; off unless an OTLP endpoint is set. */
export interface TracingConfig {
  enabled: boolean;
  /** Full URL of the OTLP/HTTP traces endpoint (…/v1/traces). */
  endpoint: string | undefined;
  protocol: 'http/protobuf' | 'http/json';
  headers: Record<string, string>;
  serviceName: string;
  /** Fraction of new traces recorded (parent-based: a sampled caller's trace is always kept). */
  sampleRatio: number;
  /** Prompt and completion text on model and tool spans; off, as the GenAI conventions advise. */
  captureContent: boolean;
}

/** Validated, normalized SSRF_ALLOWLIST entries (hosts lowercase, IP addresses canonical). */
export interface SsrfAllowlist {
  /** `10.1.0.0/16`, `fd00::/8`; a bare address becomes a /32 or /128. */
  cidrs: string[];
  /** Host names allowed whatever they resolve to. */
  hosts: string[];
  /** `host:port`, `1.2.3.4:port` or `[v6]:port`: that port only. */
  hostPorts: string[];
}

export type LogLevel = 'error' | 'warn' | 'log' | 'debug';
const LOG_LEVELS: readonly LogLevel[] = ['error', 'warn', 'log', 'debug'];

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    detail: string,
  ) {
    super(`Invalid configuration: ${variable} ${detail}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function raw(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  if (!/^-?\d+$/.test(value)) {
    throw new ConfigError(name, `must be a whole number (got "${value}")`);
  }
  const parsed = Number(value);
  if (parsed < min || parsed > max) {
    throw new ConfigError(name, `must be between ${min} and ${max} (got ${parsed})`);
  }
  return parsed;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const value = raw(env, name)?.toLowerCase();
  if (value === undefined) return fallback;
  if (['true', '1', 'yes', 'on'].includes(value)) return true;
  if (['false', '0', 'no', 'off'].includes(value)) return false;
  throw new ConfigError(name, `must be true or false (got "${value}")`);
}

function url(env: Env, name: string, protocols: readonly string[]): string | undefined {
  const value = raw(env, name);
  if (value === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError(name, 'must be an absolute URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')} (got "${parsed.protocol}")`);
  }
  return value;
}

const UNIT_BYTES: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

/** A size in b, kb, mb (or gb), from 1kb to `maxMb` megabytes (64 unless said). */
function byteSize(env: Env, name: string, fallback: number, maxMb = 64): number {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  const match = /^(\d+)\s*(b|kb|mb|gb)?$/i.exec(value);
  if (!match) throw new ConfigError(name, `must be a size such as 512kb or 2mb (got "${value}")`);
  const bytes = Number(match[1]) * UNIT_BYTES[(match[2] ?? 'b').toLowerCase()];
  if (bytes < 1024 || bytes > maxMb * 1024 * 1024) {
    throw new ConfigError(
      name,
      `must be between 1kb and ${maxMb >= 1024 ? `${maxMb / 1024}gb` : `${maxMb}mb`}`,
    );
  }
  return bytes;
}

/** FILES_MAX_BYTES (at most 512mb, OpenAI's own cap) and FILES_ORG_MAX_BYTES (at least one file). */
function loadFiles(env: Env): AppConfig['files'] {
  const maxBytes = byteSize(env, 'FILES_MAX_BYTES', 32 * 1024 * 1024, 512);
  const organizationMaxBytes = byteSize(env, 'FILES_ORG_MAX_BYTES', 1024 ** 3, 1024 * 1024);
  if (organizationMaxBytes < maxBytes) {
    throw new ConfigError('FILES_ORG_MAX_BYTES', 'must be at least FILES_MAX_BYTES');
  }
  return { maxBytes, organizationMaxBytes };
}

/** MAX_HEADER_SIZE: Node's own default (16 KB), at most 1 MB (every header is held in memory). */
function headerSize(env: Env): number {
  const bytes = byteSize(env, 'MAX_HEADER_SIZE', 16 * 1024);
  if (bytes > 1024 * 1024) throw new ConfigError('MAX_HEADER_SIZE', 'must be between 1kb and 1mb');
  return bytes;
}

function list(env: Env, name: string, fallback: string[]): string[] {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  return [
    ...new Set(
      value
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item.length > 0),
    ),
  ];
}

/** An http(s) origin: scheme, host and port, nothing else. */
function origin(name: string, value: string): string {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError(
      name,
      `must hold absolute origins such as https://admin.example.com (got "${value}")`,
    );
  }
  if (!['http:', 'https:'].includes(parsed.protocol)) {
    throw new ConfigError(name, `must use http: or https: (got "${parsed.protocol}")`);
  }
  if (parsed.pathname !== '/' || parsed.search || parsed.hash || parsed.username || parsed.password) {
    throw new ConfigError(name, `must be an origin without path, query or credentials (got "${value}")`);
  }
  return parsed.origin;
}

function loadOidc(env: Env): AppConfig['oidc'] {
  // Kept verbatim: it must equal the tokens' `iss` exactly, trailing slash included.
  const issuer = url(env, 'OIDC_ISSUER', ['http:', 'https:']);
  const clientId = raw(env, 'OIDC_CLIENT_ID');
  const extraAudiences = list(env, 'OIDC_EXTRA_AUDIENCES', []);
  const validateAudience = boolean(env, 'OIDC_VALIDATE_AUDIENCE', true);
  if (issuer && validateAudience && !clientId && extraAudiences.length === 0) {
    throw new ConfigError('OIDC_CLIENT_ID', 'is required with OIDC_ISSUER while OIDC_VALIDATE_AUDIENCE=true');
  }
  return {
    issuer,
    clientId,
    extraAudiences,
    validateAudience,
    groupsClaim: raw(env, 'OIDC_GROUPS_CLAIM') ?? 'groups',
    clockSkewSeconds: integer(env, 'OIDC_CLOCK_SKEW_SECONDS', 30, 0, 300),
    jwksCacheMs: integer(env, 'OIDC_JWKS_CACHE_SECONDS', 600, 10, 86_400) * 1000,
    adminGroup: adminGroup(env),
    adminAudience: adminAudience(env, issuer, [...(clientId ? [clientId] : []), ...extraAudiences]),
  };
}

/**
 * The audience of administrator tokens. A token the MCP gateway accepts is issued to any
 * loopback PKCE client; were the admin API to accept the same audience, a platform
 * administrator's gateway token would be a full platform credential in that client's hands.
 */
function adminAudience(env: Env, issuer: string | undefined, gatewayAudiences: string[]): string | undefined {
  const audience = raw(env, 'ADMIN_AUDIENCE');
  if (audience === undefined) {
    if (issuer !== undefined && raw(env, 'ADMIN_GROUP') !== undefined) {
      throw new ConfigError(
        'ADMIN_AUDIENCE',
        "is required with ADMIN_GROUP: administrator tokens need an audience of their own, not the MCP gateway's",
      );
    }
    return undefined;
  }
  if (gatewayAudiences.includes(audience)) {
    throw new ConfigError(
      'ADMIN_AUDIENCE',
      'must differ from OIDC_CLIENT_ID and OIDC_EXTRA_AUDIENCES (the MCP gateway accepts those)',
    );
  }
  return audience;
}

/** Console sign-in with the identity provider makes sense only where its tokens can be administrators'. */
function consoleOidcClientId(env: Env): string | undefined {
  const clientId = raw(env, 'CONSOLE_OIDC_CLIENT_ID');
  if (
    clientId !== undefined &&
    (raw(env, 'OIDC_ISSUER') === undefined || raw(env, 'ADMIN_GROUP') === undefined)
  ) {
    throw new ConfigError(
      'CONSOLE_OIDC_CLIENT_ID',
      'needs OIDC_ISSUER and ADMIN_GROUP (platform administrators sign in with it)',
    );
  }
  return clientId;
}

function adminGroup(env: Env): string | undefined {
  const group = raw(env, 'ADMIN_GROUP');
  // A full path, compared exactly: a bare name would match a group of that name anywhere.
  if (group !== undefined && !/^\/[^/]+(\/[^/]+)*$/.test(group)) {
    throw new ConfigError(
      'ADMIN_GROUP',
      `must be a full group path such as /platform/admins (got "${group}")`,
    );
  }
  return group;
}

function loadMcpGateway(env: Env): AppConfig['mcpGateway'] {
  const admin = raw(env, 'PUBLIC_ADMIN_ORIGIN');
  return {
    publicAdminOrigin: admin === undefined ? undefined : origin('PUBLIC_ADMIN_ORIGIN', admin),
    allowedOrigins: list(env, 'MCP_ALLOWED_ORIGINS', []).map((item) => origin('MCP_ALLOWED_ORIGINS', item)),
    scopesSupported: list(env, 'MCP_SCOPES_SUPPORTED', ['openid']),
  };
}

function loadLimits(env: Env): AppConfig['limits'] {
  const redisKeyPrefix = raw(env, 'REDIS_KEY_PREFIX') ?? 'switchboard';
  if (!/^[A-Za-z0-9._:-]{1,64}$/.test(redisKeyPrefix)) {
    throw new ConfigError('REDIS_KEY_PREFIX', 'must be 1-64 letters, digits, ".", "_", ":" or "-"');
  }
  const max = integer(env, 'MAX_IN_FLIGHT_RESPONSES', 512, 1, 100_000);
  // One organization's share: a quarter of the cap by default, never more than all of it.
  const perOrganization = integer(env, 'MAX_IN_FLIGHT_PER_ORGANIZATION', quarter(max), 1, max);
  return {
    defaultPerMinute: integer(env, 'RATE_LIMIT_DEFAULT_PER_MINUTE', 600, 0, 10_000_000),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    redisKeyPrefix,
    organizationCacheTtlMs: integer(env, 'RATE_LIMIT_CACHE_SECONDS', 10, 0, 300) * 1000,
    maxInFlightResponses: max,
    maxInFlightPerOrganization: perOrganization,
    adminPerMinute: integer(env, 'ADMIN_RATE_LIMIT_PER_MINUTE', 600, 0, 10_000_000),
  };
}

/** An organization's default part of a replica-wide total: a quarter of it (at least 1 of a non-zero total). */
function quarter(total: number): number {
  return Math.ceil(total / 4);
}

function loadUsage(env: Env): AppConfig['usage'] {
  const flushMs = integer(env, 'USAGE_FLUSH_MS', 1000, 10, 60_000);
  const orphanAfterMs = integer(env, 'USAGE_ORPHAN_AFTER_MS', 60_000, 0, 86_400_000);
  return { flushMs, orphanAfterMs };
}

function loadVectorStores(env: Env): AppConfig['vectorStores'] {
  const ingestPollMs = integer(env, 'VECTOR_STORE_INGEST_POLL_MS', 1000, 10, 600_000);
  // Other replicas join a busy queue within this (an attach wakes only the replica it reached).
  const longest = Math.max(5_000, ingestPollMs);
  const ingestPollMaxMs = integer(env, 'VECTOR_STORE_INGEST_POLL_MAX_MS', longest, 10, 3_600_000);
  if (ingestPollMaxMs < ingestPollMs) {
    throw new ConfigError(
      'VECTOR_STORE_INGEST_POLL_MAX_MS',
      `must be at least VECTOR_STORE_INGEST_POLL_MS (${ingestPollMs})`,
    );
  }
  return {
    ingestPollMs,
    ingestPollMaxMs,
    ingestLeaseMs: integer(env, 'VECTOR_STORE_INGEST_LEASE_MS', 120_000, 1000, 3_600_000),
    perOrganization: integer(env, 'QUOTA_VECTOR_STORES_PER_ORGANIZATION', 1000, 0, 100_000_000),
    filesPerStore: integer(env, 'QUOTA_FILES_PER_VECTOR_STORE', 10_000, 0, 100_000_000),
  };
}

function loadQuotas(env: Env): AppConfig['quotas'] {
  const most = 100_000_000;
  return {
    assistantsPerOrganization: integer(env, 'QUOTA_ASSISTANTS_PER_ORGANIZATION', 1000, 0, most),
    specialistsPerAssistant: integer(env, 'QUOTA_SPECIALISTS_PER_ASSISTANT', 50, 0, most),
    toolsPerOrganization: integer(env, 'QUOTA_TOOLS_PER_ORGANIZATION', 500, 0, most),
    gatewaysPerOrganization: integer(env, 'QUOTA_GATEWAYS_PER_ORGANIZATION', 100, 0, most),
    apiKeysPerOrganization: integer(env, 'QUOTA_API_KEYS_PER_ORGANIZATION', 1000, 0, most),
    itemsPerConversation: integer(env, 'QUOTA_ITEMS_PER_CONVERSATION', 10_000, 0, most),
  };
}

function loadMetrics(env: Env): AppConfig['metrics'] {
  const token = raw(env, 'METRICS_TOKEN');
  if (token !== undefined && token.length < 16) {
    throw new ConfigError('METRICS_TOKEN', 'must be at least 16 characters');
  }
  return { token, public: boolean(env, 'METRICS_PUBLIC', false) };
}

function loadUpstream(env: Env): AppConfig['upstream'] {
  // UPSTREAM_TIMEOUT_SECONDS is the default of both deadlines a model call runs against.
  const timeoutMs = integer(env, 'UPSTREAM_TIMEOUT_SECONDS', 60, 1, 3600) * 1000;
  return {
    headersTimeoutMs: integer(env, 'UPSTREAM_HEADERS_TIMEOUT_MS', 30_000, 50, 3_600_000),
    firstTokenTimeoutMs: integer(env, 'UPSTREAM_FIRST_TOKEN_TIMEOUT_MS', timeoutMs, 50, 3_600_000),
    stallTimeoutMs: integer(env, 'UPSTREAM_STALL_TIMEOUT_MS', timeoutMs, 50, 3_600_000),
    maxRetries: integer(env, 'UPSTREAM_MAX_RETRIES', 2, 0, 10),
    retryBudgetMs: integer(env, 'UPSTREAM_RETRY_BUDGET_MS', 15_000, 0, 600_000),
    failoverBudgetMs: integer(env, 'UPSTREAM_FAILOVER_BUDGET_MS', 60_000, 0, 600_000),
    breakerFailures: integer(env, 'UPSTREAM_BREAKER_FAILURES', 3, 0, 1000),
    // At most 30 s: a recovered target gets traffic back within 30 s (issue 26).
    breakerCooldownMs: integer(env, 'UPSTREAM_BREAKER_COOLDOWN_MS', 10_000, 100, 30_000),
    maxClients: integer(env, 'UPSTREAM_MAX_CLIENTS', 256, 1, 100_000),
    keyEnvironment: env,
  };
}

function loadDurableTurns(env: Env): AppConfig['durableTurns'] {
  const leaseMs = integer(env, 'TURN_LEASE_SECONDS', 15, 2, 3600) * 1000;
  const renewMs = integer(env, 'TURN_LEASE_RENEW_MS', 1000, 50, 600_000);
  if (renewMs * 2 > leaseMs) {
    throw new ConfigError('TURN_LEASE_RENEW_MS', 'must be at most half of TURN_LEASE_SECONDS');
  }
  const running = integer(env, 'BACKGROUND_MAX_RUNNING', 64, 1, 100_000);
  const queued = integer(env, 'BACKGROUND_MAX_QUEUED', 1000, 0, 1_000_000);
  // An organization's shares: a quarter of the replica's by default, never more than all of it.
  const runShare = integer(env, 'BACKGROUND_MAX_RUNNING_PER_ORGANIZATION', quarter(running), 1, running);
  const queueShare = integer(env, 'BACKGROUND_MAX_QUEUED_PER_ORGANIZATION', quarter(queued), 0, queued);
  const followPollMs = integer(env, 'RESUME_POLL_MS', 200, 10, 10_000);
  const followPollMaxMs = integer(env, 'RESUME_POLL_MAX_MS', Math.max(1000, followPollMs), 10, 60_000);
  if (followPollMaxMs < followPollMs) {
    throw new ConfigError('RESUME_POLL_MAX_MS', `must be at least RESUME_POLL_MS (${followPollMs})`);
  }
  return {
    leaseMs,
    renewMs,
    sweepMs: integer(env, 'TURN_SWEEP_MS', 5000, 50, 600_000),
    maxRunningBackground: running,
    maxQueuedBackground: queued,
    maxRunningBackgroundPerOrganization: runShare,
    maxQueuedBackgroundPerOrganization: queueShare,
    eventFlushMs: integer(env, 'BACKGROUND_EVENT_FLUSH_MS', 100, 1, 10_000),
    followPollMs,
    followPollMaxMs,
    eventRetentionMs: integer(env, 'BACKGROUND_EVENTS_RETENTION_HOURS', 24, 1, 24 * 90) * 3_600_000,
  };
}

function loadLifecycle(env: Env): AppConfig['lifecycle'] {
  return {
    shutdownDelayMs: integer(env, 'SHUTDOWN_DELAY_SECONDS', 0, 0, 300) * 1000,
    shutdownGraceMs: integer(env, 'SHUTDOWN_GRACE_SECONDS', 25, 0, 3600) * 1000,
  };
}

/** Canonical host as URLs spell it (`127.1` → `127.0.0.1`, IPv6 compressed, names lowercase). */
function canonicalHost(host: string): string | undefined {
  try {
    const hostname = new URL(`http://${host}/`).hostname;
    return hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  } catch {
    return undefined;
  }
}

function ssrfAllowlist(env: Env, name: string): SsrfAllowlist {
  try {
    return parseSsrfAllowlist(list(env, name, []));
  } catch (error) {
    throw new ConfigError(name, (error as Error).message);
  }
}

/**
 * SSRF allowlist entries (CIDRs, addresses, host names, host:port), canonical: the
 * `SSRF_ALLOWLIST` variable and an organization's `ssrfAllowlist`. Throws naming a bad entry.
 */
export function parseSsrfAllowlist(entries: readonly string[]): SsrfAllowlist {
  const allowlist: SsrfAllowlist = { cidrs: [], hosts: [], hostPorts: [] };
  for (const entry of entries) {
    const invalid = () =>
      new Error(`entries must be CIDRs, addresses, host names or host:port (got "${entry}")`);
    const cidr = /^([0-9a-f:.]+)\/(\d{1,3})$/i.exec(entry);
    const hostPort = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+):(\d{1,5})$/i.exec(entry);
    if (cidr) {
      const family = isIP(cidr[1]);
      const prefix = Number(cidr[2]);
      if (family === 0 || prefix > (family === 4 ? 32 : 128)) throw invalid();
      allowlist.cidrs.push(`${canonicalHost(family === 6 ? `[${cidr[1]}]` : cidr[1])}/${prefix}`);
    } else if (isIP(entry) !== 0) {
      const family = isIP(entry);
      allowlist.cidrs.push(
        `${canonicalHost(family === 6 ? `[${entry}]` : entry)}/${family === 4 ? 32 : 128}`,
      );
    } else if (hostPort) {
      const host = canonicalHost(hostPort[1]);
      const port = Number(hostPort[2]);
      if (host === undefined || port < 1 || port > 65535) throw invalid();
      allowlist.hostPorts.push(`${isIP(host) === 6 ? `[${host}]` : host}:${port}`);
    } else if (/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i.test(entry)) {
      allowlist.hosts.push(entry.toLowerCase());
    } else {
      throw invalid();
    }
  }
  return allowlist;
}

function loadTools(env: Env): AppConfig['tools'] {
  return {
    ssrfAllowlist: ssrfAllowlist(env, 'SSRF_ALLOWLIST'),
    timeoutMs: integer(env, 'TOOL_TIMEOUT_SECONDS', 30, 1, 600) * 1000,
    maxOutputBytes: byteSize(env, 'TOOL_OUTPUT_MAX_BYTES', 64 * 1024),
    mcpToolsCacheMs: integer(env, 'MCP_TOOLS_CACHE_SECONDS', 300, 0, 86_400) * 1000,
    mcpToolsCacheMaxEntries: integer(env, 'MCP_TOOLS_CACHE_MAX_ENTRIES', 1000, 1, 100_000),
    secretEnvironment: env,
  };
}

function loadTracing(env: Env): TracingConfig {
  const base = url(env, 'OTEL_EXPORTER_OTLP_ENDPOINT', ['http:', 'https:']);
  const endpoint =
    url(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', ['http:', 'https:']) ??
    (base === undefined ? undefined : `${base.replace(/\/+$/, '')}/v1/traces`);
  const exporter = (raw(env, 'OTEL_TRACES_EXPORTER') ?? 'otlp').toLowerCase();
  if (exporter !== 'otlp' && exporter !== 'none') {
    throw new ConfigError('OTEL_TRACES_EXPORTER', `must be otlp or none (got "${exporter}")`);
  }
  const protocol =
    raw(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ??
    raw(env, 'OTEL_EXPORTER_OTLP_PROTOCOL') ??
    'http/protobuf';
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    throw new ConfigError(
      'OTEL_EXPORTER_OTLP_PROTOCOL',
      `must be http/protobuf or http/json (got "${protocol}")`,
    );
  }
  const headers: Record<string, string> = {};
  for (const pair of list(env, 'OTEL_EXPORTER_OTLP_HEADERS', [])) {
    const at = pair.indexOf('=');
    if (at <= 0)
      throw new ConfigError('OTEL_EXPORTER_OTLP_HEADERS', 'must be key=value pairs separated by commas');
    try {
      headers[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      throw new ConfigError('OTEL_EXPORTER_OTLP_HEADERS', 'holds a malformed percent-encoding');
    }
  }
  const ratio = raw(env, 'OTEL_TRACES_SAMPLER_ARG');
  const sampleRatio = ratio === undefined ? 1 : Number(ratio);
  if (!Number.isFinite(sampleRatio) || sampleRatio < 0 || sampleRatio > 1) {
    throw new ConfigError('OTEL_TRACES_SAMPLER_ARG', `must be a number from 0 to 1 (got "${ratio}")`);
  }
  return {
    enabled: !boolean(env, 'OTEL_SDK_DISABLED', false) && exporter === 'otlp' && endpoint !== undefined,
    endpoint,
    protocol,
    headers,
    serviceName: raw(env, 'OTEL_SERVICE_NAME') ?? 'switchboard',
    sampleRatio,
    captureContent: boolean(env, 'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT', false),
  };
}

/**
 * Read by the openai SDK, which adds its headers to every request of every client: the
 * upstreams an organization writes would receive them, and no client option turns that off
 * (src/llm/upstream-client.ts). Refused at boot rather than sent to all of them.
 */
const SDK_HEADERS_VARIABLE = 'OPENAI_CUSTOM_HEADERS';

export function loadConfig(env: Env = process.env): AppConfig {
  if (raw(env, SDK_HEADERS_VARIABLE) !== undefined) {
    throw new ConfigError(
      SDK_HEADERS_VARIABLE,
      'is not supported: the openai SDK would send these headers to every upstream, those organizations configure included',
    );
  }
  const logLevel = (raw(env, 'LOG_LEVEL') ?? 'log').toLowerCase() as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  }
  const databaseUrl = url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);
  return {
    server: {
      host: raw(env, 'HOST') ?? '0.0.0.0',
      port: integer(env, 'PORT', 8080, 0, 65535),
      bodyLimitBytes: byteSize(env, 'BODY_LIMIT', 4 * 1024 * 1024),
      maxHeaderBytes: headerSize(env),
      publicBaseUrl: url(env, 'PUBLIC_BASE_URL', ['http:', 'https:'])?.replace(/\/+$/, ''),
      trustProxy: boolean(env, 'TRUST_PROXY', false),
      keepAliveTimeoutMs: integer(env, 'HTTP_KEEP_ALIVE_TIMEOUT_SECONDS', 65, 1, 3600) * 1000,
    },
    database: {
      url: databaseUrl,
      embeddedDataDir: resolve(raw(env, 'EMBEDDED_DATA_DIR') ?? '.switchboard/data'),
      poolMax: integer(env, 'DATABASE_POOL_MAX', 20, 1, 500),
      runMigrationsOnBoot: boolean(env, 'MIGRATIONS_RUN_ON_BOOT', true),
      embeddedMaintenanceMs: integer(env, 'EMBEDDED_MAINTENANCE_SECONDS', 60, 0, 86_400) * 1000,
    },
    auth: {
      apiKeyCacheTtlMs: integer(env, 'API_KEY_CACHE_TTL_SECONDS', 5, 0, 300) * 1000,
    },
    quickstart: {
      // Only ever on the embedded database: a real deployment never gets a demo key.
      enabled: databaseUrl === undefined && boolean(env, 'QUICKSTART', true),
    },
    console: {
      enabled: boolean(env, 'CONSOLE_ENABLED', true),
      oidcClientId: consoleOidcClientId(env),
      oidcScope: raw(env, 'CONSOLE_OIDC_SCOPE') ?? 'openid',
    },
    upstream: loadUpstream(env),
    streaming: {
      heartbeatMs: integer(env, 'SSE_HEARTBEAT_SECONDS', 15, 1, 300) * 1000,
    },
    turns: {
      maxIterations: integer(env, 'TOOL_LOOP_MAX_ITERATIONS', 8, 1, 50),
      maxHandovers: integer(env, 'HANDOVER_MAX_PER_TURN', 3, 0, 20),
    },
    conversations: {
      idleAfterMs: integer(env, 'CONVERSATION_IDLE_HOURS', 24, 1, 24 * 365) * 3600 * 1000,
    },
    memory: {
      contextBudgetChars: integer(env, 'MEMORY_CONTEXT_BUDGET_CHARS', 4000, 0, 1_000_000),
    },
    oidc: loadOidc(env),
    mcpGateway: loadMcpGateway(env),
    limits: loadLimits(env),
    quotas: loadQuotas(env),
    metrics: loadMetrics(env),
    lifecycle: loadLifecycle(env),
    durableTurns: loadDurableTurns(env),
    tools: loadTools(env),
    inputs: {
      maxImageBytes: byteSize(env, 'INPUT_IMAGE_MAX_BYTES', 5 * 1024 * 1024),
      maxFileBytes: byteSize(env, 'INPUT_FILE_MAX_BYTES', 10 * 1024 * 1024),
      urlTimeoutMs: integer(env, 'INPUT_URL_TIMEOUT_SECONDS', 10, 1, 300) * 1000,
    },
    files: loadFiles(env),
    vectorStores: loadVectorStores(env),
    usage: loadUsage(env),
    logging: { level: logLevel },
    tracing: loadTracing(env),
  };
}

/** Injection token for the typed configuration. */
export const APP_CONFIG = Symbol('APP_CONFIG');
