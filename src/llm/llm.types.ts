import type { ModelSettings } from './model-settings.js';

/** A Chat Completions message: the lingua franca of every provider behind the service. */
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ModelTool {
  name: string;
  description?: string;
  parameters: Record<string, unknown>;
}

export interface ModelRequest {
  settings: ModelSettings;
  messages: ChatMessage[];
  tools: ModelTool[];
  /** Aborted when the client goes away or the service shuts down. */
  signal: AbortSignal;
}

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cachedTokens?: number;
  reasoningTokens?: number;
}

/** What a provider yields while the model answers; tool-call fragments are keyed by `index`. */
export type ModelEvent =
  | { type: 'text'; delta: string }
  | { type: 'tool_call'; index: number; id?: string; name?: string; argumentsDelta?: string }
  | { type: 'usage'; usage: TokenUsage };

export interface LlmProvider {
  /** Events in batches: what one network read of the upstream carried, relayed together. */
  stream(request: ModelRequest): AsyncIterable<ModelEvent[]>;
}

/** The upstream failed; `code` is the catalogue code a client sees. */
export class UpstreamError extends Error {
  constructor(
    readonly code: 'upstream_unavailable' | 'upstream_timeout',
    message: string,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }
}

/** The caller went away (or the service is shutting down); not an upstream failure. */
export class TurnAbortedError extends Error {
  constructor() {
    super('The turn was aborted');
    this.name = 'TurnAbortedError';
  }
}
