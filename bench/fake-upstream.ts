import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  parseProfileModel,
  tokenText,
  TOOL_ARGUMENT_FRAGMENTS,
  BENCH_TOOL,
  type UpstreamProfile,
} from './upstream-profile.js';

/**
 * A Chat Completions server standing in for the model: the time to first token, tokens per reply
 * and token interval come from the model name (see upstream-profile.ts). Every chunk is
 * serialized once per model, so a token costs one `write` here and the CPU measured elsewhere is
 * the relays' own. Runs as its own process so its CPU is attributed to it.
 */

const CREATED = 1_700_000_000;
const encoder = (value: unknown) => Buffer.from(`data: ${JSON.stringify(value)}\n\n`);

interface Prepared {
  model: string;
  profile: UpstreamProfile;
  /** Role chunk and first token, sent together at the time to first token. */
  head: Buffer;
  /** Tokens 1..n-1, one buffer each. */
  rest: Buffer[];
  /** Everything after the head when the interval is 0. */
  burst: Buffer;
  stop: Buffer;
  toolStop: Buffer;
  toolFragments: Buffer[];
}

const DONE = Buffer.from('data: [DONE]\n\n');
const prepared = new Map<string, Prepared>();
/** What the latest request carried, so the bench can check a scenario sends what it claims. */
let lastRequest = { messages: 0, systemChars: 0, bytes: 0 };
let callCounter = 0;

function chunk(model: string, delta: Record<string, unknown>, finishReason: string | null = null): Buffer {
  return encoder({
    id: 'chatcmpl-bench',
    object: 'chat.completion.chunk',
    created: CREATED,
    model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  });
}

function prepare(model: string, profile: UpstreamProfile): Prepared {
  let entry = prepared.get(model);
  if (entry) return entry;
  const head = Buffer.concat([
    chunk(model, { role: 'assistant', content: '' }),
    chunk(model, { content: tokenText(0) }),
  ]);
  const rest: Buffer[] = [];
  for (let index = 1; index < profile.tokens; index++) rest.push(chunk(model, { content: tokenText(index) }));
  entry = {
    model,
    profile,
    head,
    rest,
    burst: Buffer.concat(rest),
    stop: chunk(model, {}, 'stop'),
    toolStop: chunk(model, {}, 'tool_calls'),
    toolFragments: TOOL_ARGUMENT_FRAGMENTS.map((fragment) =>
      chunk(model, { tool_calls: [{ index: 0, function: { arguments: fragment } }] }),
    ),
  };
  prepared.set(model, entry);
  return entry;
}

interface ChatRequest {
  model?: unknown;
  messages?: { role?: string; content?: unknown }[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
}

function usage(promptBytes: number, completionTokens: number) {
  const prompt = Math.ceil(promptBytes / 4);
  return {
    prompt_tokens: prompt,
    completion_tokens: completionTokens,
    total_tokens: prompt + completionTokens,
  };
}

function usageChunk(model: string, promptBytes: number, completionTokens: number): Buffer {
  return encoder({
    id: 'chatcmpl-bench',
    object: 'chat.completion.chunk',
    created: CREATED,
    model,
    choices: [],
    usage: usage(promptBytes, completionTokens),
  });
}

/** Writes `head` after the time to first token, then each of `parts` per interval, then `tail`. */
function paced(res: http.ServerResponse, entry: Prepared, head: Buffer, parts: Buffer[], tail: Buffer): void {
  const { ttftMs, intervalMs } = entry.profile;
  let interval: NodeJS.Timeout | undefined;
  res.on('close', () => {
    clearTimeout(first);
    clearInterval(interval);
  });
  const first = setTimeout(() => {
    if (res.destroyed) return;
    res.write(head);
    if (parts.length === 0 || intervalMs === 0) {
      res.end(
        parts.length === 0
          ? tail
          : Buffer.concat([parts === entry.rest ? entry.burst : Buffer.concat(parts), tail]),
      );
      return;
    }
    let next = 0;
    interval = setInterval(() => {
      if (res.destroyed) return clearInterval(interval);
      res.write(parts[next++]);
      if (next === parts.length) {
        clearInterval(interval);
        res.end(tail);
      }
    }, intervalMs);
  }, ttftMs);
}

function answer(req: http.IncomingMessage, res: http.ServerResponse, raw: Buffer): void {
  let body: ChatRequest;
  try {
    body = JSON.parse(raw.toString('utf8')) as ChatRequest;
  } catch {
    res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"bad json"}}');
    return;
  }
  const model = typeof body.model === 'string' ? body.model : '';
  const profile = parseProfileModel(model);
  if (!profile) {
    res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"unknown model"}}');
    return;
  }
  const entry = prepare(model, profile);
  const messages = Array.isArray(body.messages) ? body.messages : [];
  lastRequest = {
    messages: messages.length,
    systemChars: messages.reduce(
      (sum, message) =>
        sum + (message.role === 'system' && typeof message.content === 'string' ? message.content.length : 0),
      0,
    ),
    bytes: raw.length,
  };
  const callsTool = profile.toolCall && messages[messages.length - 1]?.role !== 'tool';
  const includeUsage = body.stream_options?.include_usage === true;

  if (body.stream !== true) {
    const delay = profile.ttftMs + (callsTool ? 0 : Math.max(0, profile.tokens - 1) * profile.intervalMs);
    const message = callsTool
      ? {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: `call_${++callCounter}`,
              type: 'function',
              function: { name: BENCH_TOOL.name, arguments: TOOL_ARGUMENT_FRAGMENTS.join('') },
            },
          ],
        }
      : { role: 'assistant', content: entry.rest.length === 0 ? tokenText(0) : fullText(profile.tokens) };
    const json = JSON.stringify({
      id: 'chatcmpl-bench',
      object: 'chat.completion',
      created: CREATED,
      model,
      choices: [{ index: 0, message, finish_reason: callsTool ? 'tool_calls' : 'stop' }],
      usage: usage(raw.length, callsTool ? 8 : profile.tokens),
    });
    const timer = setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(json);
    }, delay);
    res.on('close', () => clearTimeout(timer));
    return;
  }

  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
  res.socket?.setNoDelay(true);
  if (callsTool) {
    const head = chunk(model, {
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          index: 0,
          id: `call_${++callCounter}`,
          type: 'function',
          function: { name: BENCH_TOOL.name, arguments: '' },
        },
      ],
    });
    const tail = Buffer.concat([
      entry.toolStop,
      includeUsage ? usageChunk(model, raw.length, 8) : Buffer.alloc(0),
      DONE,
    ]);
    paced(res, entry, head, entry.toolFragments, tail);
    return;
  }
  const tail = Buffer.concat([
    entry.stop,
    includeUsage ? usageChunk(model, raw.length, profile.tokens) : Buffer.alloc(0),
    DONE,
  ]);
  paced(res, entry, entry.head, entry.rest, tail);
}

const texts = new Map<number, string>();
function fullText(tokens: number): string {
  let text = texts.get(tokens);
  if (text === undefined) {
    text = '';
    for (let index = 0; index < tokens; index++) text += tokenText(index);
    texts.set(tokens, text);
  }
  return text;
}

export function createFakeUpstream(): http.Server {
  const server = http.createServer({ keepAliveTimeout: 65_000, requestTimeout: 0 }, (req, res) => {
    if (req.method === 'GET' && req.url === '/last') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(lastRequest));
      return;
    }
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
      return;
    }
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => answer(req, res, parts.length === 1 ? parts[0] : Buffer.concat(parts)));
  });
  server.maxRequestsPerSocket = 0;
  return server;
}

// Run as a child of the bench: listen on loopback and report the port.
if (process.argv[1]?.endsWith('fake-upstream.js')) {
  const server = createFakeUpstream();
  server.listen(Number(process.env.BENCH_PORT ?? 0), '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    if (process.send) process.send({ type: 'ready', port });
    else process.stdout.write(`fake upstream on http://127.0.0.1:${port}/v1\n`);
  });
  process.on('disconnect', () => process.exit(0));
}
