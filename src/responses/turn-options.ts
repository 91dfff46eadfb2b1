import type { ModelSettings } from '../llm/model-settings.js';
import { ApiError } from '../common/errors/error-catalogue.js';
import type { ModelOptions, ModelTool } from '../llm/llm.types.js';
import type { ServerTool } from '../tools/server-tool.js';
import type { CreateResponseDto, FunctionToolDto } from './dto/create-response.dto.js';
import type { ResponseOptions, TextFormat } from './dto/response-options.dto.js';
import type { ToolChoice } from '../turns/turn-plan.js';

/**
 * The request's parameters as the Response echoes them: what was sent, or the value in effect
 * (the assistant's default, else the API's). Computed once per turn, before the model is called.
 */
export interface EchoedParams {
  tools: EchoedTool[];
  tool_choice: unknown;
  truncation: 'auto' | 'disabled';
  parallel_tool_calls: boolean;
  text: { format: EchoedFormat; verbosity?: 'low' | 'medium' | 'high' };
  top_p: number;
  presence_penalty: number;
  frequency_penalty: number;
  top_logprobs: number;
  temperature: number;
  reasoning: { effort: string | null; summary: string | null } | null;
  user: string | null;
  max_output_tokens: number | null;
  max_tool_calls: number | null;
  store: boolean;
  background: boolean;
  service_tier: string;
  metadata: Record<string, string>;
  safety_identifier: string | null;
  prompt_cache_key: string | null;
}

/** The Open Responses Response carries a json_schema format without its schema (`schema: null`). */
export type EchoedFormat =
  | Exclude<TextFormat, { type: 'json_schema' }>
  | { type: 'json_schema'; name: string; description: string | null; schema: null; strict: boolean };

export interface EchoedTool {
  type: 'function';
  name: string;
  description: string | null;
  parameters: Record<string, unknown>;
  strict: boolean;
}

/** The request's options as one turn uses them, resolved against its assistant once. */
export interface ResolvedOptions {
  /** The request's parameters as the Response echoes them. */
  params: EchoedParams;
  /** The provider-neutral model parameters of every call of the turn (per call: see callOptions). */
  modelOptions: ModelOptions;
  /** For the whole response: the request's, else the assistant's default, else its ceiling. */
  maxOutputTokens: number | null;
}

/**
 * The request's options against this assistant, before anything is read: refused by name where
 * the assistant cannot do them, then as the Response echoes them and as every model call takes them.
 */
export function resolveOptions(request: CreateResponseDto, model: ModelSettings): ResolvedOptions {
  checkOptionsForAssistant(request.options, model);
  const maxOutputTokens = maxOutputTokensOf(request.options, model);
  const echoed = echoedParams(request.options, request.tools, model, maxOutputTokens);
  return {
    params: { ...withHostedToolEcho(echoed, request), background: request.background },
    modelOptions: modelOptionsOf(request.options),
    maxOutputTokens,
  };
}

/**
 * Refuses, by name, what this assistant cannot do or may not be asked: an output limit above the
 * administrator's ceiling, a forced tool call on a model without function calling.
 */
function checkOptionsForAssistant(options: ResponseOptions, model: ModelSettings): void {
  const ceiling = model.maxOutputTokensLimit;
  if (ceiling !== undefined && options.maxOutputTokens !== null && options.maxOutputTokens > ceiling) {
    throw new ApiError(
      'invalid_request',
      `max_output_tokens ${options.maxOutputTokens} is above this assistant's limit of ${ceiling}`,
    );
  }
  if (!model.functionCalling && options.toolChoice.mode === 'required') {
    throw new ApiError(
      'tool_not_supported_for_model',
      'tool_choice forces a tool call, but the model behind this assistant cannot call tools',
    );
  }
}

/** A request option the model call takes under the same name, its value unchanged. */
type SameNamed = {
  [K in keyof ModelOptions & keyof ResponseOptions]: NonNullable<ResponseOptions[K]> extends ModelOptions[K]
    ? K
    : never;
}[keyof ModelOptions & keyof ResponseOptions];

/** The request options a model call takes unchanged, under the same name, when they are given. */
const PASSED_AS_GIVEN = [
  'temperature',
  'topP',
  'presencePenalty',
  'frequencyPenalty',
  'user',
  'safetyIdentifier',
  'promptCacheKey',
  'promptCacheRetention',
  'serviceTier',
] as const satisfies readonly SameNamed[];

/** The provider-neutral model parameters of every call of the turn (per call: see TurnRunner). */
function modelOptionsOf(options: ResponseOptions): ModelOptions {
  const model: ModelOptions = {};
  for (const name of PASSED_AS_GIVEN) {
    const value = options[name];
    // Null is "not given"; an empty string (user, prompt_cache_key…) is not sent either.
    if (value !== null && value !== '') Object.assign(model, { [name]: value });
  }
  // Log probabilities are asked for only when the response will carry them.
  if (options.logprobs) model.topLogprobs = options.topLogprobs ?? 0;
  if (!options.parallelToolCalls) model.parallelToolCalls = false;
  const format = options.text.format;
  if (format.type === 'json_object') model.format = { type: 'json_object' };
  else if (format.type === 'json_schema') {
    model.format = {
      type: 'json_schema',
      name: format.name,
      description: format.description ?? undefined,
      schema: format.schema,
      strict: format.strict,
    };
  }
  if (options.text.verbosity) model.verbosity = options.text.verbosity;
  if (options.reasoning?.effort) model.reasoningEffort = options.reasoning.effort;
  return model;
}

/**
 * The options of one model call: the request's, with what is left of `max_output_tokens` and the
 * tool choice in force. Null when the output budget is already spent.
 */
export function callOptions(
  plan: { modelOptions: ModelOptions; toolChoice: ToolChoice; maxOutputTokens: number | null },
  tools: ModelTool[],
  serverTools: ServerTool[],
  forced: boolean,
  outputTokensUsed: number,
): ModelOptions | null {
  const options: ModelOptions = { ...plan.modelOptions };
  if (plan.maxOutputTokens !== null) {
    const left = plan.maxOutputTokens - outputTokensUsed;
    if (left <= 0) return null;
    options.maxOutputTokens = left;
  }
  const choice = plan.toolChoice;
  if (choice.mode === 'none') options.toolChoice = { mode: 'none' };
  else if (forced) {
    let name = choice.name ?? undefined;
    if (choice.hosted === 'web_search') {
      name = serverTools.find((tool) => tool.kind === 'web_search')?.definition.name;
      if (!name) throw new ApiError('invalid_request', 'tool_choice: this assistant has no web search tool');
    }
    if (choice.hosted === 'file_search') {
      name = serverTools.find((tool) => tool.kind === 'file_search')?.definition.name;
      if (!name) {
        throw new ApiError(
          'invalid_request',
          'tool_choice: {type: "file_search"} needs a file_search tool in the request\'s tools',
        );
      }
    }
    if (name !== undefined && !tools.some((tool) => tool.name === name)) {
      throw new ApiError(
        'invalid_request',
        `tool_choice names the function "${name}", which is neither a tool of this request nor of the assistant`,
      );
    }
    if (tools.length === 0)
      throw new ApiError('invalid_request', 'tool_choice "required": there are no tools to call');
    options.toolChoice = name === undefined ? { mode: 'required' } : { mode: 'required', name };
  }
  return options;
}

/** The output limit of the whole response: the request's, else the assistant's default, else its ceiling. */
function maxOutputTokensOf(options: ResponseOptions, model: ModelSettings): number | null {
  const assistantDefault = model.provider === 'openai-compatible' ? model.maxOutputTokens : undefined;
  return options.maxOutputTokens ?? assistantDefault ?? model.maxOutputTokensLimit ?? null;
}

function echoedParams(
  options: ResponseOptions,
  tools: FunctionToolDto[],
  model: ModelSettings,
  maxOutputTokens: number | null,
): EchoedParams {
  const defaultTemperature = model.provider === 'openai-compatible' ? model.temperature : undefined;
  return {
    tools: tools.map((tool) => ({
      type: 'function',
      name: tool.name,
      description: tool.description ?? null,
      parameters: tool.parameters,
      strict: tool.strict ?? false,
    })),
    tool_choice: options.toolChoice.echo,
    truncation: options.truncation,
    parallel_tool_calls: options.parallelToolCalls,
    text: options.text.verbosity
      ? { format: echoFormat(options.text.format), verbosity: options.text.verbosity }
      : { format: echoFormat(options.text.format) },
    top_p: options.topP ?? 1,
    presence_penalty: options.presencePenalty ?? 0,
    frequency_penalty: options.frequencyPenalty ?? 0,
    top_logprobs: options.topLogprobs ?? 0,
    temperature: options.temperature ?? defaultTemperature ?? 1,
    reasoning: options.reasoning,
    user: options.user,
    max_output_tokens: maxOutputTokens,
    max_tool_calls: options.maxToolCalls,
    store: options.store,
    background: false,
    service_tier: options.serviceTier ?? 'default',
    metadata: options.metadata,
    safety_identifier: options.safetyIdentifier,
    prompt_cache_key: options.promptCacheKey,
  };
}

/** The echoed `tools`: the request's file_search and web_search tools after its function tools. */
function withHostedToolEcho<T extends { tools: unknown[] }>(params: T, request: CreateResponseDto): T {
  const hosted = [request.fileSearch?.echo, request.webSearch?.echo].filter((echo) => echo !== undefined);
  return hosted.length > 0 ? { ...params, tools: [...params.tools, ...hosted] } : params;
}

function echoFormat(format: TextFormat): EchoedFormat {
  return format.type === 'json_schema' ? { ...format, schema: null } : format;
}

/** For responses stored before their parameters were kept: the API's defaults. */
export const DEFAULT_ECHO: EchoedParams = {
  tools: [],
  tool_choice: 'auto',
  truncation: 'disabled',
  parallel_tool_calls: true,
  text: { format: { type: 'text' } },
  top_p: 1,
  presence_penalty: 0,
  frequency_penalty: 0,
  top_logprobs: 0,
  temperature: 1,
  reasoning: null,
  user: null,
  max_output_tokens: null,
  max_tool_calls: null,
  store: true,
  background: false,
  service_tier: 'default',
  metadata: {},
  safety_identifier: null,
  prompt_cache_key: null,
};
