import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI, { APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsStreaming,
} from 'openai/resources/chat/completions';
import { traceHeaders } from '../common/tracing/tracing.js';
import type { OpenAiCompatibleModelSettings } from './model-settings.js';
import { readChatCompletionChunks } from './chat-completion-chunks.js';
import { upstreamBody, upstreamFetch } from './upstream-fetch.js';
import {
  ContextLengthError,
  TurnAbortedError,
  UnsupportedParameterError,
  UpstreamError,
  type LlmProvider,
  type ModelEvent,
  type ModelRequest,
  type TokenLogprob,
  type UpstreamAccess,
} from './llm.types.js';

export interface OpenAiCompatibleOptions {
  timeoutMs: number;
  maxRetries: number;
}

const RETRYABLE_STATUS = new Set([408, 409, 429, 500, 502, 503, 504]);

/**
 * Any OpenAI-compatible Chat Completions endpoint (OpenAI, Azure OpenAI, vLLM, Ollama, LiteLLM…)
 * through the official SDK. Retries with backoff happen only before the first event: once a
 * token has reached the client, a failure ends the turn instead of repeating text.
 */
export class OpenAiCompatibleProvider implements LlmProvider {
  private readonly clients = new Map<string, OpenAI>();

  constructor(private readonly options: OpenAiCompatibleOptions) {}

  async *stream(request: ModelRequest): AsyncIterable<ModelEvent[]> {
    const settings = request.settings as OpenAiCompatibleModelSettings;
    const timeoutMs = (settings.timeoutSeconds ?? 0) * 1000 || this.options.timeoutMs;
    for (let attempt = 0; ; attempt++) {
      let delivered = false;
      try {
        for await (const event of this.attempt(settings, request, timeoutMs)) {
          delivered = true;
          yield event;
        }
        return;
      } catch (error) {
        const retryable = error instanceof RetryableUpstreamError;
        if (!retryable || delivered || attempt >= this.options.maxRetries) {
          throw retryable ? error.upstream : error;
        }
        await backoff(attempt, request.signal);
      }
    }
  }

  private async *attempt(
    settings: OpenAiCompatibleModelSettings,
    request: ModelRequest,
    timeoutMs: number,
  ): AsyncIterable<ModelEvent[]> {
    const controller = new AbortController();
    let timedOut = false;
    // One timer bounds both the wait for the first chunk and every gap after it.
    const timer = setTimeout(onTimeout, timeoutMs);
    function onTimeout() {
      timedOut = true;
      controller.abort();
    }
    const onClientAbort = () => controller.abort();
    request.signal.addEventListener('abort', onClientAbort, { once: true });
    try {
      // The SDK builds, authenticates and checks the request; the body is read here in batches.
      const response = await this.client(settings, request.access)
        .chat.completions.create(this.params(settings, request), {
          signal: controller.signal,
          // W3C trace context to the platform's upstreams, so their spans join the turn's trace (empty when off).
          headers: request.access?.traceContext ? traceHeaders() : {},
        })
        .asResponse();
      const body = upstreamBody(response);
      if (!body) throw new Error('The upstream answered without a body');
      for await (const chunks of readChatCompletionChunks(body)) {
        timer.refresh();
        yield chunks.flatMap(translate);
      }
      // The SDK may end an aborted stream quietly; an abort is never a complete answer.
      if (controller.signal.aborted) throw new Error('aborted');
    } catch (error) {
      throw classify(error, { timedOut, clientAborted: request.signal.aborted });
    } finally {
      clearTimeout(timer);
      request.signal.removeEventListener('abort', onClientAbort);
    }
  }

  /** The request in Chat Completions terms: the request's options over the assistant's defaults. */
  private params(
    settings: OpenAiCompatibleModelSettings,
    request: ModelRequest,
  ): ChatCompletionCreateParamsStreaming {
    const options = request.options;
    const params: ChatCompletionCreateParamsStreaming = {
      model: settings.model,
      messages: request.messages,
      stream: true,
      stream_options: { include_usage: true },
    };
    if (request.tools.length > 0) {
      params.tools = request.tools.map((tool) => ({
        type: 'function' as const,
        function:
          tool.strict === undefined
            ? { name: tool.name, description: tool.description, parameters: tool.parameters }
            : {
                name: tool.name,
                description: tool.description,
                parameters: tool.parameters,
                strict: tool.strict,
              },
      }));
      const choice = options.toolChoice;
      if (choice?.name) params.tool_choice = { type: 'function', function: { name: choice.name } };
      else if (choice && choice.mode !== 'auto') params.tool_choice = choice.mode;
      if (options.parallelToolCalls === false) params.parallel_tool_calls = false;
    }
    const temperature = options.temperature ?? settings.temperature;
    if (temperature !== undefined) params.temperature = temperature;
    if (options.topP !== undefined) params.top_p = options.topP;
    if (options.presencePenalty !== undefined) params.presence_penalty = options.presencePenalty;
    if (options.frequencyPenalty !== undefined) params.frequency_penalty = options.frequencyPenalty;
    const maxTokens = options.maxOutputTokens ?? settings.maxOutputTokens;
    if (maxTokens !== undefined) {
      if (settings.maxTokensParameter === 'max_completion_tokens') params.max_completion_tokens = maxTokens;
      else params.max_tokens = maxTokens;
    }
    if (options.topLogprobs !== undefined) {
      params.logprobs = true;
      params.top_logprobs = options.topLogprobs;
    }
    if (options.format?.type === 'json_object') params.response_format = { type: 'json_object' };
    else if (options.format?.type === 'json_schema') {
      const { name, description, schema, strict } = options.format;
      params.response_format = { type: 'json_schema', json_schema: { name, description, schema, strict } };
    }
    if (options.verbosity) params.verbosity = options.verbosity;
    if (options.reasoningEffort) params.reasoning_effort = options.reasoningEffort;
    if (options.user) params.user = options.user;
    if (options.safetyIdentifier) params.safety_identifier = options.safetyIdentifier;
    if (options.promptCacheKey) params.prompt_cache_key = options.promptCacheKey;
    if (options.promptCacheRetention) params.prompt_cache_retention = options.promptCacheRetention;
    if (options.serviceTier) params.service_tier = options.serviceTier;
    return params;
  }

  /** One client, and its own keep-alive connection pool, per upstream, key and connection guard. */
  private client(settings: OpenAiCompatibleModelSettings, access: UpstreamAccess | undefined): OpenAI {
    const apiKey = access?.apiKey ?? 'not-set';
    const cacheKey = `${settings.baseUrl}\u0000${apiKey}\u0000${access?.poolKey ?? ''}`;
    let client = this.clients.get(cacheKey);
    if (!client) {
      client = new OpenAI({
        baseURL: settings.baseUrl,
        apiKey,
        maxRetries: 0,
        timeout: 24 * 3600 * 1000,
        fetch: upstreamFetch(access?.connect),
      });
      this.clients.set(cacheKey, client);
    }
    return client;
  }
}

/** Servers that stream reasoning put it beside `content`: `reasoning_content` (vLLM, DeepSeek) or `reasoning` (Ollama, OpenRouter). */
type ReasoningDelta = { reasoning_content?: string | null; reasoning?: string | null };

function translate(chunk: ChatCompletionChunk): ModelEvent[] {
  const events: ModelEvent[] = [];
  const choice = chunk.choices?.[0];
  const delta = choice?.delta as (NonNullable<typeof choice>['delta'] & ReasoningDelta) | undefined;
  const reasoning = delta?.reasoning_content || delta?.reasoning;
  if (reasoning) events.push({ type: 'reasoning', delta: reasoning });
  if (delta?.content) {
    const logprobs = choice?.logprobs?.content;
    events.push(
      logprobs
        ? { type: 'text', delta: delta.content, logprobs: logprobs.map(toLogprob) }
        : { type: 'text', delta: delta.content },
    );
  }
  for (const call of delta?.tool_calls ?? []) {
    events.push({
      type: 'tool_call',
      index: call.index,
      id: call.id ?? undefined,
      name: call.function?.name ?? undefined,
      argumentsDelta: call.function?.arguments ?? undefined,
    });
  }
  if (choice?.finish_reason === 'length') events.push({ type: 'length_limit' });
  if (chunk.usage) {
    events.push({
      type: 'usage',
      usage: {
        inputTokens: chunk.usage.prompt_tokens,
        outputTokens: chunk.usage.completion_tokens,
        cachedTokens: chunk.usage.prompt_tokens_details?.cached_tokens ?? undefined,
        reasoningTokens: chunk.usage.completion_tokens_details?.reasoning_tokens ?? undefined,
      },
    });
  }
  return events;
}

function toLogprob(entry: {
  token: string;
  logprob: number;
  bytes: number[] | null;
  top_logprobs: { token: string; logprob: number; bytes: number[] | null }[];
}): TokenLogprob {
  return {
    token: entry.token,
    logprob: entry.logprob,
    bytes: entry.bytes ?? [],
    top_logprobs: entry.top_logprobs.map((top) => ({
      token: top.token,
      logprob: top.logprob,
      bytes: top.bytes ?? [],
    })),
  };
}

/** Wraps an error that may be retried before the first token. */
class RetryableUpstreamError extends Error {
  constructor(readonly upstream: UpstreamError) {
    super(upstream.message);
  }
}

function classify(error: unknown, state: { timedOut: boolean; clientAborted: boolean }): Error {
  if (state.clientAborted) return new TurnAbortedError();
  if (state.timedOut || error instanceof APIConnectionTimeoutError) {
    return new UpstreamError('upstream_timeout', 'The upstream model did not answer in time');
  }
  if (error instanceof APIUserAbortError) return new TurnAbortedError();
  const status = error instanceof APIError ? (error.status as number | undefined) : undefined;
  if (status === 400 && isContextLengthError(error as APIError)) return new ContextLengthError();
  const param = status === 400 ? (error as APIError).param : undefined;
  if (typeof param === 'string' && param.length > 0) return new UnsupportedParameterError(param);
  if (status !== undefined) {
    const upstream = new UpstreamError('upstream_unavailable', `The upstream model answered HTTP ${status}`);
    return RETRYABLE_STATUS.has(status) ? new RetryableUpstreamError(upstream) : upstream;
  }
  // Connection refused or reset, malformed stream: worth another try before the first token.
  return new RetryableUpstreamError(
    new UpstreamError('upstream_unavailable', 'The upstream model is unreachable'),
  );
}

/** OpenAI says `context_length_exceeded`; vLLM, Ollama and LiteLLM say it in words. */
function isContextLengthError(error: APIError): boolean {
  if (error.code === 'context_length_exceeded') return true;
  return /context length|context window|maximum context|too many tokens|prompt is too long/i.test(
    error.message,
  );
}

async function backoff(attempt: number, signal: AbortSignal): Promise<void> {
  const delay = Math.min(2000, 200 * 2 ** attempt) * (0.5 + Math.random() / 2);
  try {
    await sleep(delay, undefined, { signal });
  } catch {
    throw new TurnAbortedError();
  }
}
