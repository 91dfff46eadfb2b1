import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { openRelayStore, type RelayStore } from './relay-store.js';

/**
 * The baseline: the least a Node.js process can do to serve the service's requests. It accepts
 * the same POST /v1/responses bodies, calls the same upstream with a keep-alive node:http agent,
 * and writes the same Responses events (one write each, backpressure honoured), so the client
 * parses identical streams. It keeps threads in a bounded in-memory map: no authentication, no
 * validation, no database. Service minus relay is therefore what the service's features cost.
 * With a store (relay-store.ts) it is the persisting relay: the same, plus one INSERT per turn.
 */

type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

interface AssistantRoute {
  model: string;
  instructions: string;
}

const MAX_THREADS = 200_000;

export interface RelayOptions {
  upstreamBaseUrl: string;
  /** Assistant id (bare UUID) → upstream model and instructions. */
  assistants: Record<string, AssistantRoute>;
  /** The persisting relay: each completed turn is stored before its final event. */
  store?: RelayStore;
}

export function createRelay(options: RelayOptions): http.Server {
  const upstream = new URL(options.upstreamBaseUrl.replace(/\/+$/, '') + '/chat/completions');
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 1024 });
  const threads = new Map<string, ChatMessage[]>();

  const remember = (id: string, messages: ChatMessage[]) => {
    if (threads.size >= MAX_THREADS) threads.delete(threads.keys().next().value!);
    threads.set(id, messages);
  };

  return http.createServer({ keepAliveTimeout: 65_000, requestTimeout: 0 }, (req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/responses') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"code":"not_found"}}');
      return;
    }
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      let body: any;
      try {
        body = JSON.parse(Buffer.concat(parts).toString('utf8'));
      } catch {
        return fail(res, 400, 'invalid_request');
      }
      const assistantId = String(body.model ?? '').replace(/^asst_/, '');
      const route = options.assistants[assistantId];
      if (!route) return fail(res, 404, 'assistant_not_found');
      let history: ChatMessage[] = [];
      if (body.previous_response_id) {
        const found = threads.get(String(body.previous_response_id));
        if (!found) return fail(res, 404, 'response_not_found');
        history = found;
      }
      const added = toMessages(body.input);
      const system: ChatMessage[] = [{ role: 'system', content: route.instructions }];
      if (typeof body.instructions === 'string') system.push({ role: 'system', content: body.instructions });
      const tools = Array.isArray(body.tools)
        ? body.tools.map((tool: any) => ({
            type: 'function',
            function: { name: tool.name, description: tool.description, parameters: tool.parameters },
          }))
        : undefined;
      const payload = JSON.stringify({
        model: route.model,
        messages: [...system, ...history, ...added],
        stream: true,
        stream_options: { include_usage: true },
        tools,
      });
      const turn = new Turn(res, body.stream === true, assistantId, body.previous_response_id ?? null);
      const upstreamReq = http.request(
        {
          agent,
          host: upstream.hostname,
          port: upstream.port,
          path: upstream.pathname,
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(payload),
            authorization: 'Bearer bench',
          },
        },
        (upstreamRes) => {
          if (upstreamRes.statusCode !== 200) {
            upstreamRes.resume();
            return turn.fail();
          }
          upstreamRes.setEncoding('utf8');
          let buffer = '';
          upstreamRes.on('data', (part: string) => {
            buffer += part;
            let start = 0;
            for (;;) {
              const end = buffer.indexOf('\n\n', start);
              if (end < 0) break;
              const line = buffer.slice(start, end);
              start = end + 2;
              if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
              if (!turn.chunk(JSON.parse(line.slice(6)))) {
                upstreamRes.pause();
                res.once('drain', () => upstreamRes.resume());
              }
            }
            buffer = buffer.slice(start);
          });
          upstreamRes.on('end', () => {
            const transcript = [...history, ...added, turn.assistantMessage()];
            remember(turn.id, transcript);
            const response = turn.complete();
            if (!response) return;
            if (!options.store) return turn.deliver(response);
            options.store
              .save({ id: turn.id, model: response.model, input: body.input, output: response.output })
              .then(
                () => turn.deliver(response),
                () => turn.fail(),
              );
          });
        },
      );
      upstreamReq.on('error', () => turn.fail());
      res.on('close', () => {
        if (!res.writableFinished) upstreamReq.destroy();
      });
      upstreamReq.end(payload);
    });
  });
}

function fail(res: http.ServerResponse, status: number, code: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { type: 'invalid_request_error', code, message: code } }));
}

function toMessages(input: unknown): ChatMessage[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  if (!Array.isArray(input)) return [];
  const messages: ChatMessage[] = [];
  for (const item of input) {
    if (item.type === 'function_call_output') {
      messages.push({ role: 'tool', tool_call_id: item.call_id, content: String(item.output) });
    } else {
      const content = Array.isArray(item.content)
        ? item.content.map((part: any) => part.text ?? '').join('')
        : String(item.content ?? '');
      if (item.role === 'assistant') messages.push({ role: 'assistant', content });
      else messages.push({ role: item.role === 'user' ? 'user' : 'system', content });
    }
  }
  return messages;
}

interface CallState {
  id: string;
  index: number;
  callId: string;
  name: string;
  arguments: string;
}

/** One response being relayed: its output items and the events they produce. */
class Turn {
  readonly id = `resp_${randomUUID()}`;
  private readonly createdAt = Math.floor(Date.now() / 1000);
  private sequence = 0;
  private text = '';
  private messageItem: { id: string; index: number } | undefined;
  private readonly calls: CallState[] = [];
  private readonly callsByUpstreamIndex = new Map<number, CallState>();
  private readonly output: any[] = [];
  private failed = false;

  constructor(
    private readonly res: http.ServerResponse,
    private readonly streaming: boolean,
    private readonly assistantId: string,
    private readonly previousId: string | null,
  ) {
    if (!streaming) return;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
    });
    res.flushHeaders();
    res.socket?.setNoDelay(true);
    this.emit('response.created', { response: this.object('in_progress') });
  }

  /** Returns false when the client's socket is full (the caller pauses the upstream). */
  chunk(chunk: any): boolean {
    const delta = chunk.choices?.[0]?.delta;
    let writable = true;
    if (delta?.content) writable = this.textDelta(delta.content);
    for (const call of delta?.tool_calls ?? []) writable = this.toolDelta(call) && writable;
    return writable;
  }

  assistantMessage(): ChatMessage {
    if (this.calls.length === 0) return { role: 'assistant', content: this.text };
    return {
      role: 'assistant',
      content: this.text || null,
      tool_calls: this.calls.map((call) => ({
        id: call.callId,
        type: 'function',
        function: { name: call.name, arguments: call.arguments },
      })),
    };
  }

  /** Closes the open output items (their done events) and returns the final Response object. */
  complete(): ReturnType<Turn['object']> | undefined {
    if (this.failed) return undefined;
    this.endMessage();
    for (const call of this.calls) {
      const item = this.output[call.index];
      item.status = 'completed';
      item.arguments = call.arguments;
      this.emit('response.function_call_arguments.done', {
        item_id: call.id,
        output_index: call.index,
        name: call.name,
        call_id: call.callId,
        arguments: call.arguments,
      });
      this.emit('response.output_item.done', { output_index: call.index, item });
    }
    return this.object(this.calls.length > 0 ? 'requires_action' : 'completed');
  }

  /** The final event (or the JSON body): after the turn is stored, for the persisting relay. */
  deliver(response: ReturnType<Turn['object']>): void {
    if (this.failed) return;
    if (!this.streaming) {
      this.res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(response));
      return;
    }
    this.emit('response.completed', { response });
    this.res.end('data: [DONE]\n\n');
  }

  fail(): void {
    if (this.failed) return;
    this.failed = true;
    const error = { type: 'server_error', code: 'upstream_unavailable', message: 'upstream failed' };
    if (!this.streaming) return fail(this.res, 503, 'upstream_unavailable');
    this.emit('response.error', { error });
    this.res.end();
  }

  private emit(type: string, payload: Record<string, unknown>): boolean {
    if (!this.streaming || this.res.destroyed) return true;
    return this.res.write(
      `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.sequence++, ...payload })}\n\n`,
    );
  }

  private textDelta(delta: string): boolean {
    let open = this.messageItem;
    if (!open) {
      open = { id: `msg_${randomUUID().replaceAll('-', '')}`, index: this.output.length };
      this.messageItem = open;
      this.output.push({
        type: 'message',
        id: open.id,
        status: 'in_progress',
        role: 'assistant',
        content: [],
      });
      this.emit('response.output_item.added', { output_index: open.index, item: this.output[open.index] });
      this.emit('response.content_part.added', {
        item_id: open.id,
        output_index: open.index,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      });
    }
    this.text += delta;
    return this.emit('response.output_text.delta', {
      item_id: open.id,
      output_index: open.index,
      content_index: 0,
      delta,
      logprobs: [],
    });
  }

  private endMessage(): void {
    const open = this.messageItem;
    if (!open) return;
    this.messageItem = undefined;
    const item = this.output[open.index];
    item.status = 'completed';
    item.content = [{ type: 'output_text', text: this.text, annotations: [] }];
    this.emit('response.output_text.done', {
      item_id: open.id,
      output_index: open.index,
      content_index: 0,
      text: this.text,
      logprobs: [],
    });
    this.emit('response.output_item.done', { output_index: open.index, item });
  }

  private toolDelta(call: any): boolean {
    let open = this.callsByUpstreamIndex.get(call.index);
    if (!open) {
      this.endMessage();
      open = {
        id: `fc_${randomUUID().replaceAll('-', '')}`,
        index: this.output.length,
        callId: call.id ?? `call_${randomUUID()}`,
        name: call.function?.name ?? '',
        arguments: '',
      };
      this.calls.push(open);
      this.callsByUpstreamIndex.set(call.index, open);
      const item = {
        type: 'function_call',
        id: open.id,
        call_id: open.callId,
        name: open.name,
        arguments: '',
        status: 'in_progress',
      };
      this.output.push(item);
      this.emit('response.output_item.added', { output_index: open.index, item });
    }
    const fragment: string | undefined = call.function?.arguments;
    if (!fragment) return true;
    open.arguments += fragment;
    return this.emit('response.function_call_arguments.delta', {
      item_id: open.id,
      output_index: open.index,
      delta: fragment,
    });
  }

  object(status: string) {
    return {
      id: this.id,
      object: 'response',
      created_at: this.createdAt,
      status,
      model: `asst_${this.assistantId}`,
      output: status === 'in_progress' ? [] : this.output,
      output_text: this.text,
      previous_response_id: this.previousId,
      instructions: null,
      usage: null,
      error: null,
      incomplete_details: null,
      metadata: {},
      parallel_tool_calls: true,
      tool_choice: 'auto',
      tools: [],
    };
  }
}

// Run as a child of the bench: routes come from the environment, the port goes back over IPC.
// BENCH_RELAY_DATABASE_URL makes it the persisting relay (pool of BENCH_RELAY_POOL_MAX connections).
if (process.argv[1]?.endsWith('relay.js')) {
  const databaseUrl = process.env.BENCH_RELAY_DATABASE_URL;
  const store = databaseUrl
    ? await openRelayStore(databaseUrl, Number(process.env.BENCH_RELAY_POOL_MAX ?? 20))
    : undefined;
  const server = createRelay({
    upstreamBaseUrl: process.env.BENCH_UPSTREAM_URL ?? 'http://127.0.0.1:8081/v1',
    assistants: JSON.parse(process.env.BENCH_RELAY_ASSISTANTS ?? '{}') as Record<string, AssistantRoute>,
    store,
  });
  server.maxRequestsPerSocket = 0;
  server.listen(Number(process.env.BENCH_PORT ?? 0), '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    if (process.send) process.send({ type: 'ready', port });
    else process.stdout.write(`relay on http://127.0.0.1:${port}\n`);
  });
  process.on('disconnect', () => process.exit(0));
}
