import { ApiError } from '../../common/errors/error-catalogue.js';
import type { ToolChoice } from '../../turns/turn-plan.js';

/**
 * The POST /v1/responses fields that shape what the model produces or how the turn is kept:
 * sampling, length, tool control, structured output, reasoning, identity, storage, truncation.
 * Each is validated here, by name; where it goes (upstream, store, echo) is in docs/api.md.
 */
export interface ResponseOptions {
  temperature: number | null;
  topP: number | null;
  presencePenalty: number | null;
  frequencyPenalty: number | null;
  maxOutputTokens: number | null;
  maxToolCalls: number | null;
  topLogprobs: number | null;
  /** `include: ["message.output_text.logprobs"]`. */
  logprobs: boolean;
  include: string[];
  toolChoice: ToolChoice;
  parallelToolCalls: boolean;
  text: TextOptions;
  reasoning: { effort: ReasoningEffort | null; summary: ReasoningSummary | null } | null;
  metadata: Record<string, string>;
  user: string | null;
  safetyIdentifier: string | null;
  promptCacheKey: string | null;
  promptCacheRetention: 'in_memory' | '24h' | null;
  serviceTier: ServiceTier | null;
  store: boolean;
  truncation: 'auto' | 'disabled';
}

export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';
export type ReasoningSummary = 'auto' | 'concise' | 'detailed';
export type ServiceTier = 'auto' | 'default' | 'flex' | 'scale' | 'priority';

export type TextFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | {
      type: 'json_schema';
      name: string;
      description: string | null;
      schema: Record<string, unknown>;
      strict: boolean;
    };

export interface TextOptions {
  format: TextFormat;
  verbosity: 'low' | 'medium' | 'high' | null;
}

export const METADATA_MAX_KEYS = 16;
export const METADATA_MAX_KEY_LENGTH = 64;
export const METADATA_MAX_VALUE_LENGTH = 512;
export const IDENTIFIER_MAX_LENGTH = 64;

/** Every top-level field of POST /v1/responses the service knows; anything else is refused. */
const KNOWN_FIELDS = new Set([
  'model',
  'input',
  'previous_response_id',
  'stream',
  'stream_options',
  'tools',
  'instructions',
  'temperature',
  'top_p',
  'presence_penalty',
  'frequency_penalty',
  'max_output_tokens',
  'max_tool_calls',
  'top_logprobs',
  'include',
  'tool_choice',
  'parallel_tool_calls',
  'text',
  'reasoning',
  'metadata',
  'user',
  'safety_identifier',
  'prompt_cache_key',
  'prompt_cache_retention',
  'service_tier',
  'store',
  'truncation',
  'background',
  'prompt',
  'conversation',
  'context_management',
]);

const INCLUDABLE = new Set([
  'message.output_text.logprobs',
  'reasoning.encrypted_content',
  'message.input_image.image_url',
  'file_search_call.results',
  'code_interpreter_call.outputs',
  'computer_call_output.output.image_url',
]);
const EFFORTS = new Set(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']);
const SUMMARIES = new Set(['auto', 'concise', 'detailed']);
const SERVICE_TIERS = new Set(['auto', 'default', 'flex', 'scale', 'priority']);
const VERBOSITIES = new Set(['low', 'medium', 'high']);
const FORMAT_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/** Hosted tool types the service has no equivalent for, so a choice naming them is refused. */
const HOSTED_WEB_SEARCH = new Set(['web_search', 'web_search_preview', 'web_search_2025_08_26']);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function absent(value: unknown): value is null | undefined {
  return value === undefined || value === null;
}

function refuse(message: string): never {
  throw new ApiError('invalid_request', message);
}

function number(body: Record<string, unknown>, key: string, min: number, max: number): number | null {
  const value = body[key];
  if (absent(value)) return null;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    refuse(`${key} must be a number from ${min} to ${max}`);
  }
  return value;
}

function integer(body: Record<string, unknown>, key: string, min: number, max: number): number | null {
  const value = number(body, key, min, max);
  if (value !== null && !Number.isInteger(value)) refuse(`${key} must be an integer from ${min} to ${max}`);
  return value;
}

function identifier(body: Record<string, unknown>, key: string, max: number): string | null {
  const value = body[key];
  if (absent(value)) return null;
  if (typeof value !== 'string' || value.length > max)
    refuse(`${key} must be a string of at most ${max} characters`);
  return value;
}

function oneOf<T extends string>(value: unknown, allowed: Set<string>, name: string): T {
  if (typeof value !== 'string' || !allowed.has(value)) {
    refuse(`${name} must be one of ${[...allowed].map((v) => `"${v}"`).join(', ')}`);
  }
  return value as T;
}

/** Parses the option fields of a POST /v1/responses body (already known to be an object). */
export function parseResponseOptions(body: Record<string, unknown>): ResponseOptions {
  for (const key of Object.keys(body)) {
    if (!KNOWN_FIELDS.has(key)) refuse(`Unknown parameter: ${key}`);
  }
  // `background` is parsed with the request itself (parseCreateResponse): it changes how the turn runs.
  if (!absent(body.prompt))
    refuse('prompt (stored prompt templates) is not supported; send instructions instead');
  if (!absent(body.context_management)) refuse('context_management is not supported; see truncation');
  if (!absent(body.stream_options) && !isObject(body.stream_options))
    refuse('stream_options must be an object');

  const include = parseInclude(body.include);
  const topLogprobs = integer(body, 'top_logprobs', 0, 20);
  return {
    temperature: number(body, 'temperature', 0, 2),
    topP: number(body, 'top_p', 0, 1),
    presencePenalty: number(body, 'presence_penalty', -2, 2),
    frequencyPenalty: number(body, 'frequency_penalty', -2, 2),
    maxOutputTokens: integer(body, 'max_output_tokens', 1, 10_000_000),
    maxToolCalls: integer(body, 'max_tool_calls', 1, 10_000),
    topLogprobs,
    logprobs: include.includes('message.output_text.logprobs'),
    include,
    toolChoice: parseToolChoice(body.tool_choice),
    parallelToolCalls: parseBoolean(body, 'parallel_tool_calls', true),
    text: parseText(body.text),
    reasoning: parseReasoning(body.reasoning),
    metadata: parseMetadata(body.metadata),
    user: identifier(body, 'user', 256),
    safetyIdentifier: identifier(body, 'safety_identifier', IDENTIFIER_MAX_LENGTH),
    promptCacheKey: identifier(body, 'prompt_cache_key', IDENTIFIER_MAX_LENGTH),
    promptCacheRetention: absent(body.prompt_cache_retention)
      ? null
      : oneOf(body.prompt_cache_retention, new Set(['in_memory', '24h']), 'prompt_cache_retention'),
    serviceTier: absent(body.service_tier) ? null : oneOf(body.service_tier, SERVICE_TIERS, 'service_tier'),
    store: parseBoolean(body, 'store', true),
    truncation: absent(body.truncation)
      ? 'disabled'
      : oneOf(body.truncation, new Set(['auto', 'disabled']), 'truncation'),
  };
}

function parseBoolean(body: Record<string, unknown>, key: string, fallback: boolean): boolean {
  const value = body[key];
  if (absent(value)) return fallback;
  if (typeof value !== 'boolean') refuse(`${key} must be true or false`);
  return value;
}

function parseInclude(raw: unknown): string[] {
  if (absent(raw)) return [];
  if (!Array.isArray(raw)) refuse('include must be an array of strings');
  for (const value of raw) {
    if (typeof value !== 'string' || !INCLUDABLE.has(value)) {
      refuse(`include: unknown value ${JSON.stringify(value)}`);
    }
  }
  return raw as string[];
}

function parseToolChoice(raw: unknown): ToolChoice {
  const plain = { name: null, allowed: null, hosted: null };
  if (absent(raw)) return { mode: 'auto', ...plain, echo: 'auto' };
  if (typeof raw === 'string') {
    const mode = oneOf<'auto' | 'none' | 'required'>(
      raw,
      new Set(['auto', 'none', 'required']),
      'tool_choice',
    );
    return { mode, ...plain, echo: raw };
  }
  if (!isObject(raw)) refuse('tool_choice must be "auto", "none", "required" or an object');
  if (raw.type === 'function') {
    if (typeof raw.name !== 'string' || raw.name.length === 0)
      refuse('tool_choice.name must name a function');
    return { mode: 'required', ...plain, name: raw.name, echo: { type: 'function', name: raw.name } };
  }
  if (raw.type === 'allowed_tools') {
    const mode = oneOf<'auto' | 'required'>(raw.mode, new Set(['auto', 'required']), 'tool_choice.mode');
    if (!Array.isArray(raw.tools) || raw.tools.length === 0) {
      refuse('tool_choice.tools must be a non-empty array of {type: "function", name}');
    }
    const names = raw.tools.map((tool, index) => {
      if (!isObject(tool) || tool.type !== 'function' || typeof tool.name !== 'string') {
        refuse(`tool_choice.tools[${index}] must be {type: "function", name}`);
      }
      return tool.name;
    });
    return { mode, ...plain, allowed: names, echo: { type: 'allowed_tools', mode, tools: raw.tools } };
  }
  if (typeof raw.type === 'string' && HOSTED_WEB_SEARCH.has(raw.type)) {
    return { mode: 'required', ...plain, hosted: 'web_search', echo: { type: raw.type } };
  }
  refuse(
    `tool_choice of type ${JSON.stringify(raw.type)} is not available here: use "auto", "none", "required", ` +
      '{type: "function", name}, {type: "allowed_tools", …} or {type: "web_search"}',
  );
}

function parseText(raw: unknown): TextOptions {
  if (absent(raw)) return { format: { type: 'text' }, verbosity: null };
  if (!isObject(raw)) refuse('text must be an object');
  const verbosity = absent(raw.verbosity)
    ? null
    : oneOf<'low' | 'medium' | 'high'>(raw.verbosity, VERBOSITIES, 'text.verbosity');
  const format = raw.format;
  if (absent(format)) return { format: { type: 'text' }, verbosity };
  if (!isObject(format)) refuse('text.format must be an object');
  if (format.type === 'text' || format.type === 'json_object')
    return { format: { type: format.type }, verbosity };
  if (format.type !== 'json_schema')
    refuse('text.format.type must be "text", "json_object" or "json_schema"');
  if (typeof format.name !== 'string' || !FORMAT_NAME.test(format.name)) {
    refuse('text.format.name must match ^[a-zA-Z0-9_-]{1,64}$');
  }
  if (!isObject(format.schema)) refuse('text.format.schema must be a JSON Schema object');
  if (!absent(format.description) && typeof format.description !== 'string') {
    refuse('text.format.description must be a string');
  }
  if (!absent(format.strict) && typeof format.strict !== 'boolean')
    refuse('text.format.strict must be true or false');
  return {
    format: {
      type: 'json_schema',
      name: format.name,
      description: (format.description as string | undefined) ?? null,
      schema: format.schema,
      strict: format.strict === true,
    },
    verbosity,
  };
}

function parseReasoning(raw: unknown): ResponseOptions['reasoning'] {
  if (absent(raw)) return null;
  if (!isObject(raw)) refuse('reasoning must be an object');
  // `generate_summary` is the deprecated name of `summary`.
  const summary = raw.summary ?? raw.generate_summary;
  return {
    effort: absent(raw.effort) ? null : oneOf<ReasoningEffort>(raw.effort, EFFORTS, 'reasoning.effort'),
    summary: absent(summary) ? null : oneOf<ReasoningSummary>(summary, SUMMARIES, 'reasoning.summary'),
  };
}

function parseMetadata(raw: unknown): Record<string, string> {
  if (absent(raw)) return {};
  if (!isObject(raw)) refuse('metadata must be an object of string values');
  const entries = Object.entries(raw);
  if (entries.length > METADATA_MAX_KEYS) {
    refuse(`metadata may have at most ${METADATA_MAX_KEYS} keys (got ${entries.length})`);
  }
  for (const [key, value] of entries) {
    if (key.length > METADATA_MAX_KEY_LENGTH) {
      refuse(
        `metadata keys may be at most ${METADATA_MAX_KEY_LENGTH} characters (${JSON.stringify(key.slice(0, 16))}… is ${key.length})`,
      );
    }
    if (typeof value !== 'string') refuse(`metadata.${key} must be a string`);
    if (value.length > METADATA_MAX_VALUE_LENGTH) {
      refuse(`metadata.${key} may be at most ${METADATA_MAX_VALUE_LENGTH} characters (got ${value.length})`);
    }
  }
  return raw as Record<string, string>;
}
