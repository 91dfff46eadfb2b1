import { parsePrices, type ModelPrices } from './model-prices.js';
import { ModelSettingsError } from './model-settings-error.js';

/**
 * One more place an assistant's model call may go when the one before it fails (its settings'
 * own `baseUrl`/`model`/`apiKeyEnv` are the first target). Targets of the same `model` next to
 * each other form a pool: deployments or keys of one model, shared by `weight`.
 */
export interface UpstreamTarget {
  baseUrl: string;
  model: string;
  /** Name of the environment variable holding this target's key (the same grant rules as `apiKeyEnv`). */
  apiKeyEnv?: string;
  /** Share of its pool's first attempts (default 1). */
  weight?: number;
  /** Declared context window: a prompt too long for one target goes to a target with a larger one. */
  contextWindow?: number;
  maxTokensParameter?: 'max_tokens' | 'max_completion_tokens';
  /** What this target costs; default the settings' `prices`. */
  prices?: ModelPrices;
  /** The target continues an answer given as a last assistant message (continuation). */
  prefill?: boolean;
}

/** The failures that move a model call to the next target (before its first output). */
export const FAILOVER_CODES = [
  'upstream_rate_limited',
  'upstream_unavailable',
  'upstream_timeout',
  'upstream_stream_interrupted',
  'upstream_stream_stalled',
  'upstream_malformed_response',
] as const;
export type FailoverCode = (typeof FAILOVER_CODES)[number];

export interface FailoverPolicy {
  /** Retries on one target before the next (default 0, and UPSTREAM_MAX_RETRIES on the last). */
  retriesPerTarget?: number;
  /** Every target and retry of one model call starts within this (default UPSTREAM_FAILOVER_BUDGET_MS). */
  budgetMs?: number;
  /** Which failures fail over (default all of FAILOVER_CODES); the rest end the call. */
  on?: FailoverCode[];
  /** A stream cut after its output started is finished by the next target, once (default false). */
  continuation?: boolean;
  /** How a pool's first attempts are spread: by `weight` (default) or to the member with the fewest calls running. */
  balance?: 'weighted' | 'least-busy';
  /**
   * What the Response's `model` names: the assistant (`asst_<uuid>`, the contract's default) or
   * the upstream model that answered (Failover Bench S16; docs/resilience.md#fallback-targets).
   */
  reportModel?: 'assistant' | 'upstream';
}

const MAX_FALLBACKS = 8;

/** The failover fields of openai-compatible model settings. */
export interface FailoverSettings {
  weight?: number;
  prefill?: boolean;
  fallbacks?: UpstreamTarget[];
  failover?: FailoverPolicy;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function number(source: Record<string, unknown>, field: string, key: string, min: number, max: number) {
  const value = source[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ModelSettingsError(`${field}.${key} must be an integer between ${min} and ${max}`);
  }
  return value;
}

/** Checks a base URL as `model.baseUrl` is checked; returns it without trailing slashes. */
export function httpBaseUrl(value: unknown, field: string): string {
  if (typeof value !== 'string') throw new ModelSettingsError(`${field} is required`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ModelSettingsError(`${field} must be an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ModelSettingsError(`${field} must be http or https`);
  }
  return value.replace(/\/+$/, '');
}

export function envName(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(value)) {
    throw new ModelSettingsError(`${field} must be an environment variable name`);
  }
  return value;
}

const TARGET_KEYS = new Set([
  'baseUrl',
  'model',
  'apiKeyEnv',
  'weight',
  'contextWindow',
  'maxTokensParameter',
  'prices',
  'prefill',
]);

function flag(source: Record<string, unknown>, field: string, key: string): boolean | undefined {
  const value = source[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw new ModelSettingsError(`${field}.${key} must be true or false`);
  return value;
}

/** `model.fallbacks`, `model.weight` and `model.failover` of openai-compatible settings. */
export function parseFailoverSettings(input: Record<string, unknown>): FailoverSettings {
  const parsed: FailoverSettings = {};
  const weight = number(input, 'model', 'weight', 1, 1000);
  if (weight !== undefined) parsed.weight = weight;
  const prefill = flag(input, 'model', 'prefill');
  if (prefill !== undefined) parsed.prefill = prefill;
  if (input.fallbacks !== undefined && input.fallbacks !== null) {
    if (!Array.isArray(input.fallbacks))
      throw new ModelSettingsError('model.fallbacks must be a list of targets');
    if (input.fallbacks.length > MAX_FALLBACKS) {
      throw new ModelSettingsError(`model.fallbacks has more than ${MAX_FALLBACKS} targets`);
    }
    parsed.fallbacks = input.fallbacks.map((entry: unknown, index) => {
      const field = `model.fallbacks[${index}]`;
      if (!isObject(entry)) throw new ModelSettingsError(`${field} must be an object`);
      const unknown = Object.keys(entry).find((key) => !TARGET_KEYS.has(key));
      if (unknown) throw new ModelSettingsError(`${field}.${unknown} is not a target field`);
      if (typeof entry.model !== 'string' || entry.model.length === 0) {
        throw new ModelSettingsError(`${field}.model (the upstream model name) is required`);
      }
      const target: UpstreamTarget = {
        baseUrl: httpBaseUrl(entry.baseUrl, `${field}.baseUrl`),
        model: entry.model,
      };
      const apiKeyEnv = envName(entry.apiKeyEnv, `${field}.apiKeyEnv`);
      if (apiKeyEnv !== undefined) target.apiKeyEnv = apiKeyEnv;
      const targetWeight = number(entry, field, 'weight', 1, 1000);
      if (targetWeight !== undefined) target.weight = targetWeight;
      const window = number(entry, field, 'contextWindow', 1, 100_000_000);
      if (window !== undefined) target.contextWindow = window;
      const parameter = entry.maxTokensParameter;
      if (parameter !== undefined) {
        if (parameter !== 'max_tokens' && parameter !== 'max_completion_tokens') {
          throw new ModelSettingsError(
            `${field}.maxTokensParameter must be "max_tokens" or "max_completion_tokens"`,
          );
        }
        target.maxTokensParameter = parameter;
      }
      const prices = parsePrices(entry, `${field}.prices`);
      if (prices !== undefined) target.prices = prices;
      const targetPrefill = flag(entry, field, 'prefill');
      if (targetPrefill !== undefined) target.prefill = targetPrefill;
      return target;
    });
  }
  if (input.failover !== undefined && input.failover !== null) {
    const failover = input.failover;
    if (!isObject(failover)) throw new ModelSettingsError('model.failover must be an object');
    const unknown = Object.keys(failover).find(
      (key) =>
        !['retriesPerTarget', 'budgetMs', 'on', 'continuation', 'balance', 'reportModel'].includes(key),
    );
    if (unknown) throw new ModelSettingsError(`model.failover.${unknown} is not a failover field`);
    const policy: FailoverPolicy = {};
    const retries = number(failover, 'model.failover', 'retriesPerTarget', 0, 10);
    if (retries !== undefined) policy.retriesPerTarget = retries;
    const budget = number(failover, 'model.failover', 'budgetMs', 0, 600_000);
    if (budget !== undefined) policy.budgetMs = budget;
    if (failover.on !== undefined) {
      const on = failover.on;
      if (!Array.isArray(on) || on.some((code) => !(FAILOVER_CODES as readonly unknown[]).includes(code))) {
        throw new ModelSettingsError(
          `model.failover.on must list some of ${FAILOVER_CODES.map((c) => `"${c}"`).join(', ')} (a content-policy refusal never fails over)`,
        );
      }
      policy.on = [...new Set(on as FailoverCode[])];
    }
    const continuation = flag(failover, 'model.failover', 'continuation');
    if (continuation !== undefined) policy.continuation = continuation;
    const balance = failover.balance;
    if (balance !== undefined && balance !== null) {
      if (balance !== 'weighted' && balance !== 'least-busy') {
        throw new ModelSettingsError('model.failover.balance must be "weighted" or "least-busy"');
      }
      policy.balance = balance;
    }
    const reportModel = failover.reportModel;
    if (reportModel !== undefined && reportModel !== null) {
      if (reportModel !== 'assistant' && reportModel !== 'upstream') {
        throw new ModelSettingsError('model.failover.reportModel must be "assistant" or "upstream"');
      }
      policy.reportModel = reportModel;
    }
    parsed.failover = policy;
  }
  return parsed;
}
