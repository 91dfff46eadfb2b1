import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the fake model does for one request. */
export interface UpstreamScript {
  /** Reply text, streamed word by word. */
  text?: string;
  /** Reply text streamed in exactly these chunks instead (e.g. a surrogate pair cut in two). */
  textChunks?: string[];
  toolCalls?: { id: string; name: string; arguments: string }[];
  /** Answer with this HTTP status and an OpenAI-style error body instead. */
  status?: number;
  /** The `param` of that error body (a refused parameter). */
  errorParam?: string;
  /** Wait before the first chunk. */
  delayMs?: number;
  /** Pause between chunks. */
  tokenDelayMs?: number;
  /** Destroy the connection after this many text chunks (a mid-stream failure). */
  failAfterChunks?: number;
  /** Never answer (until the client gives up). */
  hang?: boolean;
  /** Reasoning streamed before the text, in `reasoning_content` (vLLM, DeepSeek) or `reasoning` (Ollama). */
  reasoning?: string;
  reasoningField?: 'reasoning_content' | 'reasoning';
  /** The finish reason of the last chunk (default `stop`, or `tool_calls`). */
  finishReason?: string;
  /** Log probabilities with each text chunk, when the request asked for them. */
  logprobs?: boolean;
  /** Usage details the upstream reports. */
  cachedTokens?: number;
  reasoningTokens?: number;
  /** Refuse a prompt longer than this many characters (of its messages' text) as OpenAI does. */
  maxPromptChars?: number;
  /** With `status`: the error body's `code`, `type` and `message` (default "scripted failure"). */
  errorCode?: string;
  errorType?: string;
  errorMessage?: string;
  /** With `status`: `Retry-After` and `retry-after-ms` headers. */
  retryAfter?: string;
  retryAfterMs?: string;
  /** Reset the TCP connection before any response header. */
  reset?: boolean;
  /** Wait after the headers and the role chunk, before the first token. */
  firstTokenDelayMs?: number;
  /** End the body cleanly after this many text chunks: no finish reason, no usage, no `[DONE]`. */
  cutAfterChunks?: number;
  /** Go silent after this many text chunks, the connection left open. */
  stallAfterChunks?: number;
  /** Send an event whose data is not JSON before the text chunk of this index. */
  malformedAt?: number;
  /** End after the finish reason and usage without `[DONE]`; `holdOpen` keeps the body open. */
  omitDone?: boolean;
  holdOpen?: boolean;
  /** Wait for this after the usage chunk, before `[DONE]`: the turn is held between its usage and its end. */
  endAfter?: Promise<unknown>;
  /** Wait for this after the text, before the finish reason: a stream that stalls, then resumes. */
  resumeAfter?: Promise<unknown>;
  /** Send no chunk with a finish reason (usage and `[DONE]` still come). */
  omitFinish?: boolean;
  /**
   * A request ending with an assistant message (a prefill): `continue` streams the rest of `text`
   * after it, `reject` refuses it with a 400 naming `messages` (as models without prefill do).
   */
  prefill?: 'continue' | 'reject';
  /** End the body cleanly after the first tool call's chunks: no finish reason. */
  cutAfterToolCall?: boolean;
  /** Send the whole stream (headers to `[DONE]`) in one write: the client reads it, usage and all, at once. */
  oneRead?: boolean;
}

export interface RecordedRequest {
  headers: IncomingMessage['headers'];
  body: any;
  /** When it arrived (`performance.now()`), to check the waits between retries. */
  at: number;
}

/**
 * A real HTTP server speaking the Chat Completions wire format (streamed and not), scripted per
 * test, recording every request it received and every request its client abandoned.
 */
export class FakeUpstream {
  readonly requests: RecordedRequest[] = [];
  /** Requests whose client closed the connection before the reply ended. */
  aborted = 0;
  private readonly scripts: UpstreamScript[] = [];
  private fallback: UpstreamScript = { text: 'Hello from the fake upstream.' };
  private server!: Server;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}/v1`;
    return this;
  }

  /** Queues scripts for the next requests, in order; afterwards the fallback answers. */
  script(...scripts: UpstreamScript[]): this {
    this.scripts.push(...scripts);
    return this;
  }

  /** Drops the scripts not yet used (a test whose requests took another route). */
  clearScripts(): this {
    this.scripts.length = 0;
    return this;
  }

  setFallback(script: UpstreamScript): this {
    this.fallback = script;
    return this;
  }

  get last(): RecordedRequest {
    return this.requests[this.requests.length - 1];
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.url !== '/v1/chat/completions' || req.method !== 'POST') {
      res.writeHead(404).end();
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    this.requests.push({ headers: req.headers, body, at: performance.now() });
    const script = this.scripts.shift() ?? this.fallback;
    let finished = false;
    res.on('close', () => {
      if (!finished) this.aborted += 1;
    });
    if (script.hang) return;
    if (script.reset) {
      req.socket.resetAndDestroy();
      return;
    }
    if (script.delayMs) await sleep(script.delayMs);
    const promptChars = (body.messages as { content?: unknown }[]).reduce(
      (sum, message) => sum + (typeof message.content === 'string' ? message.content.length : 0),
      0,
    );
    if (script.maxPromptChars !== undefined && promptChars > script.maxPromptChars) {
      finished = true;
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: {
            message: `This model's maximum context length is ${script.maxPromptChars} characters`,
            type: 'invalid_request_error',
            code: 'context_length_exceeded',
          },
        }),
      );
      return;
    }
    if (script.status) {
      finished = true;
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (script.retryAfter !== undefined) headers['retry-after'] = script.retryAfter;
      if (script.retryAfterMs !== undefined) headers['retry-after-ms'] = script.retryAfterMs;
      res.writeHead(script.status, headers);
      res.end(
        JSON.stringify({
          error: {
            message: script.errorMessage ?? 'scripted failure',
            type: script.errorType ?? (script.errorParam ? 'invalid_request_error' : 'server_error'),
            param: script.errorParam ?? null,
            code: script.errorCode ?? null,
          },
        }),
      );
      return;
    }
    const lastMessage = body.messages[body.messages.length - 1];
    const prefill = lastMessage?.role === 'assistant' ? String(lastMessage.content ?? '') : undefined;
    if (prefill !== undefined && script.prefill === 'reject') {
      finished = true;
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: {
            message: 'This model does not support assistant message prefill.',
            type: 'invalid_request_error',
            param: 'messages',
            code: 'invalid_prefill',
          },
        }),
      );
      return;
    }
    const words =
      script.textChunks ??
      wordsOf(
        prefill !== undefined && script.prefill === 'continue' && script.text?.startsWith(prefill)
          ? script.text.slice(prefill.length)
          : script.text,
      );
    const id = `chatcmpl-${this.requests.length}`;
    if (!body.stream) {
      finished = true;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(completion(id, body.model, script)));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (script.oneRead) res.cork();
    const send = (delta: Record<string, unknown>, finish: string | null = null) =>
      res.write(`data: ${JSON.stringify(chunk(id, body.model, delta, finish))}\n\n`);
    send({ role: 'assistant', content: '' });
    for (const part of script.reasoning?.match(/\S+\s*/g) ?? []) {
      send({ [script.reasoningField ?? 'reasoning_content']: part });
    }
    if (script.firstTokenDelayMs) await sleep(script.firstTokenDelayMs);
    for (const [index, word] of words.entries()) {
      if (index === script.stallAfterChunks) return;
      if (index === script.cutAfterChunks) {
        finished = true;
        res.end();
        return;
      }
      if (index === script.malformedAt) res.write('data: {"id": "broken", "choices": [\n\n');
      if (script.failAfterChunks !== undefined && index >= script.failAfterChunks) {
        // Let the chunks already written reach the client, then cut the connection.
        await sleep(50);
        res.destroy();
        return;
      }
      if (script.tokenDelayMs) await sleep(script.tokenDelayMs);
      if (res.destroyed) return;
      if (script.logprobs && body.logprobs) {
        const logprob = { token: word, logprob: -0.25, bytes: [...Buffer.from(word)] };
        const top = Array.from({ length: body.top_logprobs ?? 0 }, (_, rank) =>
          rank === 0 ? { ...logprob } : { token: `alt${rank}`, logprob: -2 - rank, bytes: [97] },
        );
        res.write(
          `data: ${JSON.stringify({ ...chunk(id, body.model, { content: word }, null), choices: [{ index: 0, delta: { content: word }, logprobs: { content: [{ ...logprob, top_logprobs: top }] }, finish_reason: null }] })}\n\n`,
        );
        continue;
      }
      send({ content: word });
    }
    for (const [index, call] of (script.toolCalls ?? []).entries()) {
      send({
        tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
      });
      for (const part of call.arguments.match(/.{1,8}/gs) ?? []) {
        send({ tool_calls: [{ index, function: { arguments: part } }] });
      }
      if (script.cutAfterToolCall) {
        finished = true;
        res.end();
        return;
      }
    }
    if (script.resumeAfter) await script.resumeAfter;
    if (!script.omitFinish)
      send({}, script.finishReason ?? (script.toolCalls?.length ? 'tool_calls' : 'stop'));
    const usage = {
      prompt_tokens: 11,
      completion_tokens: words.length + (script.reasoningTokens ?? 0),
      total_tokens: 11 + words.length + (script.reasoningTokens ?? 0),
      prompt_tokens_details: { cached_tokens: script.cachedTokens ?? 0 },
      completion_tokens_details: { reasoning_tokens: script.reasoningTokens ?? 0 },
    };
    res.write(
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 0, model: body.model, choices: [], usage })}\n\n`,
    );
    if (script.holdOpen) return;
    if (script.endAfter) await script.endAfter;
    if (!script.omitDone) res.write('data: [DONE]\n\n');
    finished = true;
    if (script.oneRead) res.uncork();
    res.end();
  }
}

function chunk(id: string, model: string, delta: Record<string, unknown>, finish: string | null) {
  return {
    id,
    object: 'chat.completion.chunk',
    created: 0,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}

function completion(id: string, model: string, script: UpstreamScript) {
  return {
    id,
    object: 'chat.completion',
    created: 0,
    model,
    choices: [
      {
        index: 0,
        finish_reason: script.toolCalls?.length ? 'tool_calls' : 'stop',
        message: {
          role: 'assistant',
          content: script.text ?? null,
          tool_calls: script.toolCalls?.map((call) => ({
            id: call.id,
            type: 'function',
            function: { name: call.name, arguments: call.arguments },
          })),
        },
      },
    ],
    usage: { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 },
  };
}

/** Text as the chunks a model streams: words with their trailing space (a leading space kept on the first). */
function wordsOf(text: string | undefined): string[] {
  const words = text?.match(/\S+\s*/g) ?? [];
  const lead = text?.match(/^\s+/)?.[0];
  if (lead && words.length > 0) words[0] = lead + words[0];
  return words;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
