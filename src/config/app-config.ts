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
    /** Public origin of this backend, used in absolute URLs when set. */
    publicBaseUrl: string | undefined;
    trustProxy: boolean;
  };
  database: {
    /** Unset means the embedded database. */
    url: string | undefined;
    embeddedDataDir: string;
    poolMax: number;
    runMigrationsOnBoot: boolean;
  };
  auth: {
    apiKeyCacheTtlMs: number;
  };
  quickstart: {
    enabled: boolean;
  };
  upstream: {
    timeoutMs: number;
    maxRetries: number;
  };
  streaming: {
    heartbeatMs: number;
  };
  conversations: {
    idleAfterMs: number;
  };
  memory: {
    contextBudgetChars: number;
  };
  logging: {
    level: LogLevel;
  };
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

function byteSize(env: Env, name: string, fallback: number): number {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  const match = /^(\d+)\s*(b|kb|mb)?$/i.exec(value);
  if (!match) throw new ConfigError(name, `must be a size such as 512kb or 2mb (got "${value}")`);
  const unit = (match[2] ?? 'b').toLowerCase();
  const bytes = Number(match[1]) * (unit === 'mb' ? 1024 * 1024 : unit === 'kb' ? 1024 : 1);
  if (bytes < 1024 || bytes > 64 * 1024 * 1024) {
    throw new ConfigError(name, 'must be between 1kb and 64mb');
  }
  return bytes;
}

export function loadConfig(env: Env = process.env): AppConfig {
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
      publicBaseUrl: url(env, 'PUBLIC_BASE_URL', ['http:', 'https:'])?.replace(/\/+$/, ''),
      trustProxy: boolean(env, 'TRUST_PROXY', false),
    },
    database: {
      url: databaseUrl,
      embeddedDataDir: resolve(raw(env, 'EMBEDDED_DATA_DIR') ?? '.switchboard/data'),
      poolMax: integer(env, 'DATABASE_POOL_MAX', 20, 1, 500),
      runMigrationsOnBoot: boolean(env, 'MIGRATIONS_RUN_ON_BOOT', true),
    },
    auth: {
      apiKeyCacheTtlMs: integer(env, 'API_KEY_CACHE_TTL_SECONDS', 5, 0, 300) * 1000,
    },
    quickstart: {
      // Only ever on the embedded database: a real deployment never gets a demo key.
      enabled: databaseUrl === undefined && boolean(env, 'QUICKSTART', true),
    },
    upstream: {
      timeoutMs: integer(env, 'UPSTREAM_TIMEOUT_SECONDS', 60, 1, 3600) * 1000,
      maxRetries: integer(env, 'UPSTREAM_MAX_RETRIES', 2, 0, 10),
    },
    streaming: {
      heartbeatMs: integer(env, 'SSE_HEARTBEAT_SECONDS', 15, 1, 300) * 1000,
    },
    conversations: {
      idleAfterMs: integer(env, 'CONVERSATION_IDLE_HOURS', 24, 1, 24 * 365) * 3600 * 1000,
    },
    memory: {
      contextBudgetChars: integer(env, 'MEMORY_CONTEXT_BUDGET_CHARS', 4000, 0, 1_000_000),
    },
    logging: { level: logLevel },
  };
}

/** Injection token for the typed configuration. */
export const APP_CONFIG = Symbol('APP_CONFIG');
