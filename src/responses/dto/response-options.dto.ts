import { absent, isObject, oneOf, refuse } from '../../common/request-schema/request-field.js';
import type { ToolChoice } from '../../turns/turn-plan.js';

/**
 * The POST /v1/responses fields that shape what the model produces or how the turn is kept:
 * sampling, length, tool control, structured output, reasoning, identity, storage, truncation.
 * Each is declared in request-schema/create-response.fields.ts (the nested ones parsed below);
 * where it goes (upstream, store, echo) is in docs/api.md.
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

const INCLUDABLE = new Set([
  'message.output_text.logprobs',
  'reasoning.encrypted_content',
  'message.input_image.image_url',
  'file_search_call.results',
  'web_search_call.action.sources',
  'code_interpreter_call.outputs',
  'computer_call_output.output.image_url',
]);
const EFFORTS: readonly ReasoningEffort[] = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'];
const SUMMARIES: readonly ReasoningSummary[] = ['auto', 'concise', 'detailed'];
const VERBOSITIES = ['low', 'medium', 'high'] as const;
const FORMAT_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/** Hosted web search types a choice may name: the assistant's or the request's web search tool. */
const HOSTED_WEB_SEARCH = new Set(['web_search', 'web_search_preview', 'web_search_2025_08_26']);

export function parseInclude(raw: unknown): string[] {
  if (absent(raw)) return [];
  if (!Array.isArray(raw)) refuse('include must be an array of strings');
  for (const value of raw) {
    if (typeof value !== 'string' || !INCLUDABLE.has(value)) {
      refuse(`include: unknown value ${JSON.stringify(value)}`);
    }
  }
  return raw as string[];
}

export function parseToolChoice(raw: unknown): ToolChoice {
  const plain = { name: null, allowed: null, hosted: null };
  if (absent(raw)) return { mode: 'auto', ...plain, echo: 'auto' };
  if (typeof raw === 'string') {
    const mode = oneOf(raw, ['auto', 'none', 'required'] as const, 'tool_choice');
    return { mode, ...plain, echo: raw };
  }
  if (!isObject(raw)) refuse('tool_choice must be "auto", "none", "required" or an object');
  if (raw.type === 'function') {
    if (typeof raw.name !== 'string' || raw.name.length === 0)
      refuse('tool_choice.name must name a function');
    return { mode: 'required', ...plain, name: raw.name, echo: { type: 'function', name: raw.name } };
  }
  if (raw.type === 'allowed_tools') {
    const mode = oneOf(raw.mode, ['auto', 'required'] as const, 'tool_choice.mode');
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
  if (raw.type === 'file_search') {
    return { mode: 'required', ...plain, hosted: 'file_search', echo: { type: 'file_search' } };
  }
  refuse(
    `tool_choice of type ${JSON.stringify(raw.type)} is not available here: use "auto", "none", "required", ` +
      '{type: "function", name}, {type: "allowed_tools", …}, {type: "web_search"} or {type: "file_search"}',
  );
}

export function parseText(raw: unknown): TextOptions {
  if (absent(raw)) return { format: { type: 'text' }, verbosity: null };
  if (!isObject(raw)) refuse('text must be an object');
  const verbosity = absent(raw.verbosity) ? null : oneOf(raw.verbosity, VERBOSITIES, 'text.verbosity');
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

export function parseReasoning(raw: unknown): ResponseOptions['reasoning'] {
  if (absent(raw)) return null;
  if (!isObject(raw)) refuse('reasoning must be an object');
  // `generate_summary` is the deprecated name of `summary`.
  const summary = raw.summary ?? raw.generate_summary;
  return {
    effort: absent(raw.effort) ? null : oneOf(raw.effort, EFFORTS, 'reasoning.effort'),
    summary: absent(summary) ? null : oneOf(summary, SUMMARIES, 'reasoning.summary'),
  };
}

export function parseMetadata(raw: unknown): Record<string, string> {
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
