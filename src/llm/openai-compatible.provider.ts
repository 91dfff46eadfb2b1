import { Buffer } from 'node:buffer';
import type OpenAI from 'openai';
import type { ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { ClosingLru } from '../common/cache/closing-lru.js';
import { traceHeaders } from '../common/tracing/tracing.js';
import type { OpenAiCompatibleModelSettings } from './model-settings.js';
import { AnswerAttempt } from './answer-attempt.js';
import { upstreamClient } from './upstream-client.js';
import { upstreamBody, upstreamFetch, type UpstreamFetch } from './upstream-fetch.js';
import type { UpstreamDeadlineLimits } from './upstream-deadlines.js';
import { pause, RetryableUpstreamError, RetryPolicy } from './upstream-retry.js';
import type { LlmProvider, ModelRequest, StoredHistory, UpstreamAccess } from './llm.types.js';
import { OpenedStream, type ModelEventStream, type Opened } from './model-event-stream.js';

/** Read-only and the same for every call (the SDK only serializes it). */
const INCLUDE_USAGE = Object.freeze({ include_usage: true as const });

export interface OpenAiCompatibleOptions {
  headersTimeoutMs: number;
  firstTokenTimeoutMs: number;
  stallTimeoutMs: number;
  maxRetries: number;
  retryBudgetMs: number;
  /**
   * Upstream clients kept at once. Each distinct base URL, key and connection guard (organization-
   * written ones included) has its own; beyond this, the least recently used is closed.
   */
  maxClients: number;
}

/**
 * Any OpenAI-compatible Chat Completions endpoint (OpenAI, Azure OpenAI, vLLM, Ollama, LiteLLM…)
 * through the official SDK. Retries happen only before the first output: once a token has
 * reached the turn, a failure ends it instead of repeating text. An answer is complete only
 * once a chunk carried its finish reason (docs/resilience.md).
 */
export class OpenAiCompatibleProvider implements LlmProvider {
  private readonly clients: ClosingLru<{ sdk: OpenAI; fetch: UpstreamFetch }>;
  private onClientClosed: (() => void) | undefined;

  constructor(private readonly options: OpenAiCompatibleOptions) {
    this.clients = new ClosingLru(options.maxClients, (client) => {
      void client.fetch.close().catch(() => undefined);
      this.onClientClosed?.();
    });
  }

  /** Told each time a client is closed to keep the bound (the metrics count it; this layer knows none). */
  observeClientClosed(observer: () => void): void {
    this.onClientClosed = observer;
  }

  stream(request: ModelRequest): ModelEventStream {
    return new OpenedStream(() => this.open(request));
  }

  /**
   * Attempts the call until an attempt's output starts (or it completes without any): retries
   * happen only before it. The attempt that started is then read directly by the turn.
   */
  private async open(request: ModelRequest): Promise<Opened> {
    const settings = request.settings as OpenAiCompatibleModelSettings;
    // An assistant's own `timeoutSeconds` sets both its first-token and its stall deadline.
    const own = (settings.timeoutSeconds ?? 0) * 1000;
    const limits: UpstreamDeadlineLimits = {
      headersMs: this.options.headersTimeoutMs,
      firstTokenMs: own || this.options.firstTokenTimeoutMs,
      stallMs: own || this.options.stallTimeoutMs,
    };
    const retries = new RetryPolicy(
      request.retry?.maxRetries ?? this.options.maxRetries,
      request.retry?.budgetMs ?? this.options.retryBudgetMs,
    );
    const send = async (signal: AbortSignal) => {
      const client = this.client(settings, request.access);
      // W3C trace context to the platform's upstreams, so their spans join the turn's trace;
      // no headers object otherwise (the SDK walks each one it is given, twice).
      const tracing = request.access?.traceContext === true;
      // The SDK builds, authenticates and checks the request; the body is read by the attempt.
      const response = request.history
        ? // A body with stored history is written here, as bytes; the SDK sends them as they are.
          await client
            .post('/chat/completions', {
              body: requestBody(this.params(settings, request), request.history),
              headers: tracing ? { ...JSON_BODY, ...traceHeaders() } : JSON_BODY,
              stream: true,
              signal,
            })
            .asResponse()
        : await client.chat.completions
            .create(
              this.params(settings, request),
              tracing ? { signal, headers: traceHeaders() } : { signal },
            )
            .asResponse();
      return upstreamBody(response);
    };
    for (;;) {
      const attempt = new AnswerAttempt(limits, request.signal);
      let failure: unknown;
      try {
        return { reader: attempt, first: await attempt.first(send) };
      } catch (error) {
        failure = error;
      }
      if (!(failure instanceof RetryableUpstreamError)) throw failure;
      await pause(retries.next(failure), request.signal);
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
      stream_options: INCLUDE_USAGE,
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
    const kept = this.clients.get(cacheKey);
    if (kept) return kept.sdk;
    const fetch = upstreamFetch(access?.connect);
    const sdk = upstreamClient({
      baseURL: settings.baseUrl,
      apiKey,
      maxRetries: 0,
      timeout: 24 * 3600 * 1000,
      fetch,
    });
    return this.clients.add(cacheKey, { sdk, fetch }).sdk;
  }
}

/** The content type the SDK sets on a body it serializes itself, for a body written here. */
const JSON_BODY = Object.freeze({ 'content-type': 'application/json' });

/**
 * The Chat Completions body the SDK would write from `params`, as UTF-8 bytes, with the stored
 * history's text spliced into `messages` after its first `history.at` (the system messages): the
 * same JSON value, keys in the same order; only the stored messages keep the database's spacing
 * (`": "`, `", "`), which JSON ignores. The stored text is neither parsed nor re-encoded as JSON,
 * and is written straight into the body's bytes (the SDK sends bytes as they are).
 */
export function requestBody(
  params: ChatCompletionCreateParamsStreaming,
  history: { at: number; stored: StoredHistory },
): Buffer {
  const { model, messages, ...rest } = params;
  const before =
    messages.length > 0 && history.at > 0 ? JSON.stringify(messages.slice(0, history.at)).slice(1, -1) : '';
  const after = history.at < messages.length ? JSON.stringify(messages.slice(history.at)).slice(1, -1) : '';
  const stored = history.stored.json;
  const open = `{"model":${JSON.stringify(model)},"messages":[${before}${before && stored ? ',' : ''}`;
  // `rest` always holds `stream`: its text opens with `{"stream"`, continued after `messages`.
  const close = `${after && (before || stored) ? ',' : ''}${after}],${JSON.stringify(rest).slice(1)}`;
  // A buffer of its own: a small one from Node's shared pool would keep the pool's whole 8 KiB
  // slab alive for as long as undici holds the body (the whole answer; requestBytes).
  const body = Buffer.allocUnsafeSlow(
    Buffer.byteLength(open) + Buffer.byteLength(stored) + Buffer.byteLength(close),
  );
  let at = body.write(open);
  at += body.write(stored, at);
  at += body.write(close, at);
  // Every byte written, or none of the uninitialised memory would be sent.
  if (at !== body.length) throw new Error('The upstream request body was not written whole');
  return body;
}
