import type { ModelSettings } from './model-settings.js';

/** A Chat Completions message: the lingua franca of every provider behind the service. */
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string | ChatContentPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

/** Chat Completions user content parts: text, an image (URL or data URL), a file (data URL). */
export type ChatContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: 'low' | 'high' | 'auto' } }
  | { type: 'file'; file: { file_data: string; filename?: string } };

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ModelTool {
  name: string;
  description?: string;
  parameters: Record<string, unknown>;
  /** Structured-outputs function calling: arguments must follow `parameters` exactly. */
  strict?: boolean;
}

/**
 * How a model call may reach its upstream, decided per organization and per author of the model
 * settings (TenantConfigPolicy): the key it may send, and the connection guard of an
 * organization-written base URL.
 */
export interface UpstreamAccess {
  /** The value of the settings' `apiKeyEnv`, when its author may read it. */
  apiKey: string | undefined;
  /** The readable values of every target's `apiKeyEnv`, by name (fallback targets, upstream-targets.ts). */
  apiKeys?: Readonly<Record<string, string | undefined>>;
  /** Whose targets these are (the organization): circuit breakers are kept per organization and target. */
  scope?: string;
  /** Opens connections only where the organization may reach (undefined: the platform's model, unguarded). */
  connect?: import('undici').buildConnector.connector;
  /** Identifies the guard, for the connection pools kept per upstream. */
  poolKey: string;
  /** Send the request's trace context (the platform's own upstreams only). */
  traceContext: boolean;
}

/** Messages kept as the JSON text they were stored as (StoredMessages, stored-messages.ts). */
export interface StoredHistory {
  /** The elements of a JSON array, comma-separated, without the brackets ('' for none). */
  readonly json: string;
  readonly empty: boolean;
  /** The messages as objects (parsed once). */
  messages(): ChatMessage[];
}

export interface ModelRequest {
  settings: ModelSettings;
  /** Absent: no key is sent and the connection is unguarded (tests of the provider alone). */
  access?: UpstreamAccess;
  messages: ChatMessage[];
  /**
   * Earlier turns' messages as stored text, which come after the first `at` of `messages` (the
   * system messages); absent: `messages` is the whole prompt. `allMessages` gives them as objects.
   */
  history?: { at: number; stored: StoredHistory };
  tools: ModelTool[];
  /** What the request asks of this model call; each provider maps it to its own parameters. */
  options: ModelOptions;
  /** Aborted when the client goes away or the service shuts down. */
  signal: AbortSignal;
  /** Retries of this call before its first output; default the deployment's (UPSTREAM_MAX_RETRIES, _RETRY_BUDGET_MS). */
  retry?: { maxRetries: number; budgetMs: number };
  /** Filled by the provider as it goes: each target tried, and the one that answered (kept on failure too). */
  log?: UpstreamCallLog;
  /**
   * False when nothing of the call reaches a client before it ends (a JSON response): a target
   * that fails after its output started may then be replaced by the next one invisibly.
   */
  relayed?: boolean;
}

/** One try of one target of a model call (its retries included), as stored with the turn. */
export interface UpstreamAttempt {
  /** `model@host` of the target, never a key. */
  target: string;
  /** The upstream model name. */
  model: string;
  /** This target's output reached the turn (whatever happened after). */
  answered?: true;
  /** Position of the target in the assistant's declared order (0: the settings' own). */
  index: number;
  /** `completed`, or the failure's catalogue code (`context_length_exceeded`, `upstream_rate_limited`, …). */
  outcome: string;
  /** The upstream's HTTP status, when it answered with an error. */
  httpStatus?: number;
  durationMs: number;
  /** This try continued an answer cut on the target before (docs/resilience.md#continuation). */
  continuation?: 'prefill' | 'replay';
}

export interface UpstreamCallLog {
  attempts: UpstreamAttempt[];
  /** The target whose output the turn received; its model names the answer and its prices its usage. */
  answeredBy?: {
    target: string;
    model: string;
    index: number;
    prices?: import('./model-prices.js').ModelPrices;
  };
  /** Targets whose circuit breaker was open or half-open when the call started (for the trace). */
  cooling?: string[];
}

/**
 * Per-call model parameters, provider-neutral. Unset fields fall back to the agent's model
 * settings (then to the provider's default); built once per model call, never per token.
 */
export interface ModelOptions {
  temperature?: number;
  topP?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  /** What is left of the response's `max_output_tokens` for this call. */
  maxOutputTokens?: number;
  /** Token log probabilities with this many alternatives (0: the sampled token only). */
  topLogprobs?: number;
  /** Whether, and which, tools the model must call. */
  toolChoice?: { mode: 'auto' | 'none' | 'required'; name?: string };
  parallelToolCalls?: boolean;
  format?: ModelOutputFormat;
  verbosity?: 'low' | 'medium' | 'high';
  reasoningEffort?: 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';
  user?: string;
  safetyIdentifier?: string;
  promptCacheKey?: string;
  promptCacheRetention?: 'in_memory' | '24h';
  serviceTier?: 'auto' | 'default' | 'flex' | 'scale' | 'priority';
}

export type ModelOutputFormat =
  | { type: 'json_object' }
  | {
      type: 'json_schema';
      name: string;
      description?: string;
      schema: Record<string, unknown>;
      strict: boolean;
    };

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cachedTokens?: number;
  reasoningTokens?: number;
}

/** One sampled token with its log probability, in the Responses API's shape. */
export interface TokenLogprob {
  token: string;
  logprob: number;
  bytes: number[];
  top_logprobs: { token: string; logprob: number; bytes: number[] }[];
}

/** Why a response is `incomplete` (`incomplete_details.reason`, as OpenAI's Responses API says it). */
export type IncompleteReason = 'max_output_tokens' | 'content_filter';

/** What a provider yields while the model answers; tool-call fragments are keyed by `index`. */
export type ModelEvent =
  | { type: 'text'; delta: string; logprobs?: TokenLogprob[] }
  | { type: 'reasoning'; delta: string }
  | { type: 'tool_call'; index: number; id?: string; name?: string; argumentsDelta?: string }
  /**
   * The model stopped before its answer was whole: its output limit was reached (Chat
   * Completions `length`) or the provider's content filter withheld the rest (`content_filter`).
   * The answer is still the model's: the response is `incomplete`, never failed over.
   */
  | { type: 'stopped_short'; reason: IncompleteReason }
  | { type: 'usage'; usage: TokenUsage };

export interface LlmProvider {
  /** Events in batches: what one network read of the upstream carried, relayed together. */
  stream(request: ModelRequest): AsyncIterable<ModelEvent[]>;
}

/** The catalogue codes of an upstream failure (docs/resilience.md says what each one means). */
export type UpstreamErrorCode =
  | 'upstream_unavailable'
  | 'upstream_timeout'
  | 'upstream_rate_limited'
  | 'upstream_stream_interrupted'
  | 'upstream_malformed_response'
  | 'upstream_stream_stalled'
  | 'content_policy_violation'
  | 'upstream_invalid_request';

/**
 * The upstream failed; `code` is the catalogue code a client sees, `message` is safe to show
 * (any text of the provider's in it is sanitized). `retryAfterSeconds`: the upstream's own
 * Retry-After, passed on to the client.
 */
export class UpstreamError extends Error {
  constructor(
    readonly code: UpstreamErrorCode,
    message: string,
    readonly retryAfterSeconds?: number,
    /** The upstream's HTTP status, when it answered with an error (recorded with the attempt). */
    readonly httpStatus?: number,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }
}

/** The prompt does not fit the model's context window (an upstream 400, or the offline model's window). */
export class ContextLengthError extends Error {
  constructor(
    message = "The input does not fit the model's context window",
    /** The provider's own words (sanitized), when an upstream refused the prompt. */
    readonly providerReason?: string,
  ) {
    super(message);
    this.name = 'ContextLengthError';
  }
}

/**
 * The upstream refused one of the request's parameters (an HTTP 400 naming it in `param`), e.g.
 * `reasoning_effort` on a model without reasoning. `param` is the upstream's (Chat Completions) name.
 */
export class UnsupportedParameterError extends Error {
  constructor(readonly param: string) {
    super(`The upstream refused the parameter ${param}`);
    this.name = 'UnsupportedParameterError';
  }
}

/** The caller went away (or the service is shutting down); not an upstream failure. */
export class TurnAbortedError extends Error {
  constructor() {
    super('The turn was aborted');
    this.name = 'TurnAbortedError';
  }
}
