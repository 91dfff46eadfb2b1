import http from 'node:http';
import { performance } from 'node:perf_hooks';

/**
 * The client side of one exchange, as cheap as possible so the load generator measures the
 * servers and not itself: node:http with keep-alive agents, a minimal SSE scanner that only
 * parses JSON where the bench needs a value (the final response, tool calls), and a callback per
 * text delta so timing is taken when the bytes arrive.
 */
export type Protocol = 'responses' | 'chat';

export interface Exchange {
  agent: http.Agent;
  baseUrl: string;
  path: string;
  headers: Record<string, string>;
  /** POST body; null = a GET (resuming a background response's stream). */
  body: string | null;
  protocol: Protocol;
  stream: boolean;
  timeoutMs: number;
  /** Called with performance.now() for each text delta as it arrives. */
  onToken?: (at: number) => void;
  /** Keep the assembled text (preflight checks); off under load. */
  collectText?: boolean;
  /** Closes the exchange from the client side; it then ends with the error RELEASED. */
  signal?: AbortSignal;
  /** Responses JSON: statuses that count as an answer besides completed (a background turn's `queued`). */
  acceptStatuses?: readonly string[];
}

export const RELEASED = 'released by the client';

export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface ExchangeResult {
  ok: boolean;
  status: number;
  error?: string;
  startedAt: number;
  firstTokenAt?: number;
  /** Responses stream: when `response.completed` arrived. */
  completedAt?: number;
  endedAt: number;
  tokens: number;
  text?: string;
  /** Responses protocol: the final Response object (JSON body or `response.completed`). */
  response?: {
    id: string;
    status: string;
    output?: { type: string; call_id?: string }[];
    output_text?: string;
  };
  /** Chat protocol: the function call the model asked for. */
  toolCall?: ToolCall;
  /** Event types in order (preflight checks only, with collectText). */
  events?: string[];
}

export function exchange(options: Exchange): Promise<ExchangeResult> {
  return new Promise((resolve) => {
    const startedAt = performance.now();
    const result: ExchangeResult = { ok: false, status: 0, startedAt, endedAt: startedAt, tokens: 0 };
    if (options.collectText) {
      result.text = '';
      result.events = [];
    }
    let settled = false;
    const settle = (error?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', release);
      result.endedAt = performance.now();
      if (error) result.error = error;
      result.ok = error === undefined;
      resolve(result);
    };
    const url = new URL(options.path, options.baseUrl);
    const req = http.request(
      {
        agent: options.agent,
        host: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method: options.body === null ? 'GET' : 'POST',
        headers:
          options.body === null
            ? options.headers
            : {
                ...options.headers,
                'content-type': 'application/json',
                'content-length': Buffer.byteLength(options.body),
              },
      },
      (res) => {
        result.status = res.statusCode ?? 0;
        res.setEncoding('utf8');
        const streaming = (res.headers['content-type'] ?? '').startsWith('text/event-stream');
        if (result.status !== 200 || !streaming) {
          let text = '';
          res.on('data', (part: string) => (text += part));
          res.on('end', () => {
            if (result.status !== 200) return settle(`HTTP ${result.status} ${errorCode(text)}`);
            if (options.stream) return settle('expected an event stream');
            settle(readJson(options, result, text));
          });
          res.on('error', () => settle('response aborted'));
          return;
        }
        const scanner = new SseScanner(options, result);
        res.on('data', (part: string) => scanner.push(part));
        res.on('end', () => settle(scanner.finish()));
        res.on('error', () => settle('stream aborted'));
        res.on('close', () => settle(scanner.finish() ?? undefined));
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      settle('timeout');
    }, options.timeoutMs);
    const release = () => {
      settle(RELEASED);
      req.destroy();
    };
    if (options.signal?.aborted) release();
    options.signal?.addEventListener('abort', release, { once: true });
    req.on('error', (error: NodeJS.ErrnoException) => settle(error.code ?? 'request failed'));
    req.end(options.body ?? undefined);
  });
}

function errorCode(text: string): string {
  try {
    return (JSON.parse(text) as { error?: { code?: string } }).error?.code ?? '';
  } catch {
    return '';
  }
}

/** A non-streamed body: one token stamp at arrival (the whole reply comes at once). */
function readJson(options: Exchange, result: ExchangeResult, text: string): string | undefined {
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return 'invalid JSON body';
  }
  const now = performance.now();
  if (options.protocol === 'responses') {
    result.response = body;
    const outputText: string = body.output_text ?? '';
    if (outputText) {
      result.firstTokenAt = now;
      result.tokens = 1;
      options.onToken?.(now);
    }
    if (options.collectText) result.text = outputText;
    return body.status === 'completed' ||
      body.status === 'requires_action' ||
      options.acceptStatuses?.includes(body.status)
      ? undefined
      : `status ${body.status}`;
  }
  const message = body.choices?.[0]?.message;
  const call = message?.tool_calls?.[0];
  if (call) result.toolCall = { id: call.id, name: call.function.name, arguments: call.function.arguments };
  if (message?.content) {
    result.firstTokenAt = now;
    result.tokens = 1;
    options.onToken?.(now);
    if (options.collectText) result.text = message.content;
  }
  return undefined;
}

const TEXT_DELTA = 'event: response.output_text.delta\n';
const COMPLETED = 'event: response.completed\n';
const FAILED = 'event: response.error\n';

/** Splits the stream into events on blank lines; looks inside only the events that matter. */
class SseScanner {
  private buffer = '';
  private done = false;
  private failure: string | undefined;
  private call: ToolCall | undefined;

  constructor(
    private readonly options: Exchange,
    private readonly result: ExchangeResult,
  ) {}

  push(part: string): void {
    const now = performance.now();
    this.buffer += part;
    let start = 0;
    for (;;) {
      const end = this.buffer.indexOf('\n\n', start);
      if (end < 0) break;
      this.event(this.buffer.slice(start, end + 1), now);
      start = end + 2;
    }
    this.buffer = start === 0 ? this.buffer : this.buffer.slice(start);
  }

  finish(): string | undefined {
    if (this.failure) return this.failure;
    if (!this.done) return 'stream ended without [DONE]';
    if (this.options.protocol === 'chat' && this.call) this.result.toolCall = this.call;
    return undefined;
  }

  private token(now: number, text: string | undefined): void {
    if (this.result.tokens === 0) this.result.firstTokenAt = now;
    this.result.tokens++;
    this.options.onToken?.(now);
    if (this.options.collectText && text !== undefined) this.result.text += text;
  }

  private event(block: string, now: number): void {
    if (block.startsWith('data: [DONE]')) {
      this.done = true;
      return;
    }
    if (block.charCodeAt(0) === 58 /* ':' comment, heartbeat */) return;
    if (this.options.protocol === 'responses') {
      if (this.options.collectText) this.result.events!.push(block.slice(7, block.indexOf('\n')));
      if (block.startsWith(TEXT_DELTA)) {
        const text = this.options.collectText ? dataOf(block).delta : undefined;
        this.token(now, text);
      } else if (block.startsWith(COMPLETED)) {
        this.result.completedAt = now;
        this.result.response = dataOf(block).response;
      } else if (block.startsWith(FAILED)) {
        this.failure = `response.error ${dataOf(block).error?.code ?? ''}`;
      }
      return;
    }
    const data = dataOf(block);
    const delta = data.choices?.[0]?.delta;
    if (delta?.content) this.token(now, delta.content);
    const call = delta?.tool_calls?.[0];
    if (call) {
      this.call ??= { id: '', name: '', arguments: '' };
      if (call.id) this.call.id = call.id;
      if (call.function?.name) this.call.name = call.function.name;
      if (call.function?.arguments) this.call.arguments += call.function.arguments;
    }
  }
}

function dataOf(block: string): any {
  const at = block.indexOf('data: ');
  if (at < 0) return {};
  const end = block.indexOf('\n', at);
  return JSON.parse(block.slice(at + 6, end < 0 ? undefined : end));
}
