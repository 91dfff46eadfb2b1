import { compilePattern, MAX_SCRIPT_PROGRAM, PatternError } from './offline-pattern.js';
import { parsePrices, type ModelPrices } from './model-prices.js';
import { ModelSettingsError } from './model-settings-error.js';
import {
  parseFailoverSettings,
  type FailoverPolicy,
  type UpstreamTarget,
} from './upstream-target-settings.js';

export { costOf, type ModelPrices } from './model-prices.js';
export { ModelSettingsError } from './model-settings-error.js';

/**
 * How an assistant (or, later, a specialist) reaches its model. Stored as JSONB on the
 * assistant and validated here whenever it is written, by the CLI or by `apply -f`.
 */
export type ModelSettings = OpenAiCompatibleModelSettings | OfflineModelSettings;

export interface OpenAiCompatibleModelSettings {
  provider: 'openai-compatible';
  /** e.g. https://api.openai.com/v1, http://localhost:11434/v1 (Ollama), a vLLM or LiteLLM URL. */
  baseUrl: string;
  model: string;
  /** Name of the environment variable holding the upstream key (never the key itself). */
  apiKeyEnv?: string;
  functionCalling: boolean;
  /** The model takes `input_image` parts (default false: a request with one is refused). */
  vision?: boolean;
  /** The model takes `input_file` parts as Chat Completions `file` parts (default false). */
  fileInput?: boolean;
  timeoutSeconds?: number;
  temperature?: number;
  maxOutputTokens?: number;
  /** Which Chat Completions field carries the output limit (newer OpenAI models want the second). */
  maxTokensParameter?: 'max_tokens' | 'max_completion_tokens';
  /** Administrator's ceiling on a request's `max_output_tokens`; above it the request is refused. */
  maxOutputTokensLimit?: number;
  /** The model's context window in tokens, for `truncation: "auto"`. */
  contextWindow?: number;
  prices?: ModelPrices;
  /** This target's share of its pool (targets of one model next to each other; upstream-targets.ts). */
  weight?: number;
  /** This target continues an answer given as a last assistant message (docs/resilience.md#continuation). */
  prefill?: boolean;
  /** Targets tried in order when this one fails before its first output (docs/resilience.md). */
  fallbacks?: UpstreamTarget[];
  failover?: FailoverPolicy;
}

/**
 * The deterministic offline model: no network. Each rule's `match` (a case-insensitive pattern
 * of the linear-time subset of regular expressions in offline-pattern.ts) is tested against the latest input (user text, or a tool's output); the first rule
 * that matches answers with `reply` text or calls `call.tool` with `call.arguments`. Without a
 * matching rule it answers with a fixed echo of the input.
 */
export interface OfflineModelSettings {
  provider: 'offline';
  functionCalling: boolean;
  /** Default true: the offline model describes images and files it is sent. */
  vision?: boolean;
  fileInput?: boolean;
  script?: OfflineRule[];
  /** Pause between streamed tokens; 0 streams as fast as the client reads. */
  tokenDelayMs?: number;
  maxOutputTokensLimit?: number;
  /** A simulated context window (in the offline model's tokens: words); beyond it, like an upstream, it refuses. */
  contextWindow?: number;
  prices?: ModelPrices;
}

export interface OfflineRule {
  match: string;
  /** What the rule looks at: the user's latest message (default) or a tool's latest output. */
  on?: 'user' | 'tool';
  /** Reply text; `{{input}}` is replaced by the text that matched. */
  reply?: string;
  call?: { tool: string; arguments: Record<string, unknown> };
  /** Reasoning text streamed before the answer, as reasoning models do. */
  reasoning?: string;
}

export const OFFLINE_DEFAULT_SETTINGS: OfflineModelSettings = { provider: 'offline', functionCalling: true };

/** Rules of an offline script: each is tested, in order, against up to MAX_TESTED_CHARACTERS. */
const MAX_SCRIPT_RULES = 32;

/** Every rule runs on every turn: the script's patterns share one budget of compiled steps. */
function assertScriptBudget(rules: OfflineRule[]): void {
  let steps = 0;
  for (const rule of rules) steps += compilePattern(rule.match).program.length;
  if (steps > MAX_SCRIPT_PROGRAM) {
    throw new ModelSettingsError(
      `model.script's patterns compile to ${steps} steps together, above ${MAX_SCRIPT_PROGRAM}: shorten or merge them`,
    );
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function optionalNumber(
  source: Record<string, unknown>,
  key: string,
  min: number,
  max: number,
): number | undefined {
  const value = source[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw new ModelSettingsError(`model.${key} must be a number between ${min} and ${max}`);
  }
  return value;
}

function optionalChoice<T extends string>(
  source: Record<string, unknown>,
  key: string,
  choices: readonly T[],
): T | undefined {
  const value = source[key];
  if (value === undefined || value === null) return undefined;
  if (!choices.includes(value as T)) {
    throw new ModelSettingsError(`model.${key} must be one of ${choices.map((c) => `"${c}"`).join(', ')}`);
  }
  return value as T;
}

function optionalBoolean(source: Record<string, unknown>, key: string): boolean | undefined {
  const value = source[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw new ModelSettingsError(`model.${key} must be true or false`);
  return value;
}

/** The model's name in traces and usage: the upstream model, or `offline`. */
export function modelName(settings: ModelSettings): string {
  return settings.provider === 'offline' ? 'offline' : settings.model;
}

/** Whether the model takes image / file parts: as set, else true for the offline model only. */
export function takesInput(settings: ModelSettings, kind: 'vision' | 'fileInput'): boolean {
  return settings[kind] ?? settings.provider === 'offline';
}

function parseRule(rule: unknown, index: number): OfflineRule {
  if (!isObject(rule) || typeof rule.match !== 'string') {
    throw new ModelSettingsError(`model.script[${index}].match must be a string`);
  }
  try {
    compilePattern(rule.match);
  } catch (error) {
    if (!(error instanceof PatternError)) throw error;
    throw new ModelSettingsError(
      `model.script[${index}].match ${error.message} (the offline model matches a linear-time subset of regular expressions)`,
    );
  }
  const parsed: OfflineRule = { match: rule.match };
  if (rule.on !== undefined) {
    if (rule.on !== 'user' && rule.on !== 'tool') {
      throw new ModelSettingsError(`model.script[${index}].on must be "user" or "tool"`);
    }
    parsed.on = rule.on;
  }
  if (rule.reply !== undefined) {
    if (typeof rule.reply !== 'string')
      throw new ModelSettingsError(`model.script[${index}].reply must be a string`);
    parsed.reply = rule.reply;
  }
  if (rule.call !== undefined) {
    const call = rule.call;
    if (
      !isObject(call) ||
      typeof call.tool !== 'string' ||
      (call.arguments !== undefined && !isObject(call.arguments))
    ) {
      throw new ModelSettingsError(`model.script[${index}].call needs a tool name and an arguments object`);
    }
    parsed.call = {
      tool: call.tool,
      arguments: call.arguments ?? {},
    };
  }
  if (rule.reasoning !== undefined) {
    if (typeof rule.reasoning !== 'string')
      throw new ModelSettingsError(`model.script[${index}].reasoning must be a string`);
    parsed.reasoning = rule.reasoning;
  }
  if (parsed.reply === undefined && parsed.call === undefined) {
    throw new ModelSettingsError(`model.script[${index}] needs a reply or a call`);
  }
  return parsed;
}

/** Validates settings from the CLI or a config file; throws ModelSettingsError naming the field. */
export function parseModelSettings(input: unknown): ModelSettings {
  if (!isObject(input)) throw new ModelSettingsError('model must be an object');
  const functionCalling = input.functionCalling ?? true;
  if (typeof functionCalling !== 'boolean')
    throw new ModelSettingsError('model.functionCalling must be true or false');
  const vision = optionalBoolean(input, 'vision');
  const fileInput = optionalBoolean(input, 'fileInput');
  if (input.provider === 'offline') {
    const script = input.script ?? [];
    if (!Array.isArray(script)) throw new ModelSettingsError('model.script must be a list of rules');
    if (script.length > MAX_SCRIPT_RULES) {
      throw new ModelSettingsError(`model.script has more than ${MAX_SCRIPT_RULES} rules`);
    }
    const rules = script.map(parseRule);
    assertScriptBudget(rules);
    return {
      provider: 'offline',
      functionCalling,
      ...(vision === undefined ? {} : { vision }),
      ...(fileInput === undefined ? {} : { fileInput }),
      script: rules,
      tokenDelayMs: optionalNumber(input, 'tokenDelayMs', 0, 10_000),
      maxOutputTokensLimit: optionalNumber(input, 'maxOutputTokensLimit', 1, 10_000_000),
      contextWindow: optionalNumber(input, 'contextWindow', 1, 100_000_000),
      prices: parsePrices(input),
    };
  }
  if (input.provider === 'openai-compatible') {
    if (typeof input.baseUrl !== 'string') throw new ModelSettingsError('model.baseUrl is required');
    let url: URL;
    try {
      url = new URL(input.baseUrl);
    } catch {
      throw new ModelSettingsError('model.baseUrl must be an absolute URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new ModelSettingsError('model.baseUrl must be http or https');
    }
    if (typeof input.model !== 'string' || input.model.length === 0) {
      throw new ModelSettingsError('model.model (the upstream model name) is required');
    }
    if (
      input.apiKeyEnv !== undefined &&
      (typeof input.apiKeyEnv !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(input.apiKeyEnv))
    ) {
      throw new ModelSettingsError('model.apiKeyEnv must be an environment variable name');
    }
    return {
      provider: 'openai-compatible',
      baseUrl: input.baseUrl.replace(/\/+$/, ''),
      model: input.model,
      apiKeyEnv: input.apiKeyEnv,
      functionCalling,
      ...(vision === undefined ? {} : { vision }),
      ...(fileInput === undefined ? {} : { fileInput }),
      timeoutSeconds: optionalNumber(input, 'timeoutSeconds', 1, 3600),
      temperature: optionalNumber(input, 'temperature', 0, 2),
      maxOutputTokens: optionalNumber(input, 'maxOutputTokens', 1, 1_000_000),
      maxTokensParameter: optionalChoice(input, 'maxTokensParameter', [
        'max_tokens',
        'max_completion_tokens',
      ]),
      maxOutputTokensLimit: optionalNumber(input, 'maxOutputTokensLimit', 1, 10_000_000),
      contextWindow: optionalNumber(input, 'contextWindow', 1, 100_000_000),
      prices: parsePrices(input),
      ...parseFailoverSettings(input),
    };
  }
  throw new ModelSettingsError('model.provider must be "openai-compatible" or "offline"');
}
