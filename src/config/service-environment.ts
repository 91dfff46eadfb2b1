/**
 * The service's own environment: variables no model or tool configuration may name, whoever
 * writes it and whatever the platform granted. Every variable the app config reads
 * (src/config/app-config.ts; a unit test keeps this list complete), and whole families of them.
 */
const SERVICE_VARIABLES = new Set([
  'ADMIN_GROUP',
  'API_KEY_CACHE_TTL_SECONDS',
  'BACKGROUND_EVENTS_RETENTION_HOURS',
  'BACKGROUND_EVENT_FLUSH_MS',
  'BACKGROUND_MAX_QUEUED',
  'BACKGROUND_MAX_RUNNING',
  'BODY_LIMIT',
  'CONSOLE_ENABLED',
  'CONVERSATION_IDLE_HOURS',
  'EMBEDDED_DATA_DIR',
  'HANDOVER_MAX_PER_TURN',
  'HOME',
  'HOST',
  'HOSTNAME',
  'HTTP_KEEP_ALIVE_TIMEOUT_SECONDS',
  'INPUT_FILE_MAX_BYTES',
  'INPUT_IMAGE_MAX_BYTES',
  'INPUT_URL_TIMEOUT_SECONDS',
  'LOG_LEVEL',
  'MAX_HEADER_SIZE',
  'MAX_IN_FLIGHT_RESPONSES',
  'MEMORY_CONTEXT_BUDGET_CHARS',
  'MIGRATIONS_RUN_ON_BOOT',
  'PATH',
  'PORT',
  'PUBLIC_ADMIN_ORIGIN',
  'PUBLIC_BASE_URL',
  'QUICKSTART',
  'RATE_LIMIT_CACHE_SECONDS',
  'RATE_LIMIT_DEFAULT_PER_MINUTE',
  'RESUME_POLL_MS',
  'SHUTDOWN_DELAY_SECONDS',
  'SHUTDOWN_GRACE_SECONDS',
  'SSE_HEARTBEAT_SECONDS',
  'TOOL_LOOP_MAX_ITERATIONS',
  'TOOL_OUTPUT_MAX_BYTES',
  'TOOL_TIMEOUT_SECONDS',
  'TRUST_PROXY',
  'TURN_LEASE_RENEW_MS',
  'TURN_LEASE_SECONDS',
  'TURN_SWEEP_MS',
  'UPSTREAM_BREAKER_COOLDOWN_MS',
  'UPSTREAM_BREAKER_FAILURES',
  'UPSTREAM_FAILOVER_BUDGET_MS',
  'UPSTREAM_FIRST_TOKEN_TIMEOUT_MS',
  'UPSTREAM_HEADERS_TIMEOUT_MS',
  'UPSTREAM_MAX_RETRIES',
  'UPSTREAM_RETRY_BUDGET_MS',
  'UPSTREAM_STALL_TIMEOUT_MS',
  'UPSTREAM_TIMEOUT_SECONDS',
  'USAGE_FLUSH_MS',
  'USAGE_ORPHAN_AFTER_MS',
]);

/** Database, cache, tracing, metrics, identity provider, console, SSRF, limits and runtime settings, present and future. */
const SERVICE_PREFIXES = [
  'DATABASE_',
  'REDIS_',
  'OTEL_',
  'OIDC_',
  'CONSOLE_',
  'METRICS_',
  'MCP_',
  'SSRF_',
  'ADMIN_',
  'PG',
  'NODE_',
  'NPM_',
  'KUBERNETES_',
  'BACKGROUND_',
  'QUOTA_',
  'FILES_',
  'VECTOR_STORE_',
  'RESUME_',
  'TURN_',
  'MAX_IN_FLIGHT_',
];

/** Whether `name` is one of the service's own variables (compared case-insensitively). */
export function isServiceVariable(name: string): boolean {
  const upper = name.toUpperCase();
  return SERVICE_VARIABLES.has(upper) || SERVICE_PREFIXES.some((prefix) => upper.startsWith(prefix));
}
