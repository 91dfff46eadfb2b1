import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { MalformedStreamError, StreamErrorEvent } from './upstream-failure.js';
import type { UpstreamBodyStream } from './upstream-fetch.js';

/** What the reader saw besides chunks: whether `[DONE]` came, how many events it skipped. */
export interface ChunkStreamState {
  done: boolean;
  /** Events whose data is not a JSON object (skipped; see docs/resilience.md). */
  malformed: number;
}

/** More malformed events than this in one stream abandon it: it is not a glitch any more. */
export const MAX_MALFORMED_EVENTS = 16;

/** After `[DONE]` or an early stop, the rest of the body gets this long to arrive for reuse. */
const DRAIN_LIMIT_BYTES = 128 * 1024;

/**
 * Reads a Chat Completions event stream and yields, per network read, the chunks it completed.
 * The SDK's own stream iterator yields one chunk at a time through several async generators;
 * batching per read lets a turn relay a burst of tokens in one socket write. A malformed event
 * is skipped and counted in `state`; an `{"error": …}` event ends the stream with its error.
 */
export async function* readChatCompletionChunks(
  body: UpstreamBodyStream | ReadableStream<Uint8Array>,
  state: ChunkStreamState = { done: false, malformed: 0 },
  drainTimeoutMs = 30_000,
): AsyncIterable<ChatCompletionChunk[]> {
  const source = 'getReader' in body ? webText(body) : nodeText(body, drainTimeoutMs);
  let buffer = '';
  try {
    for (;;) {
      const { done, value } = await source.next();
      if (done) break;
      buffer += value;
      const chunks: ChatCompletionChunk[] = [];
      // Walk the read with an offset and keep only the unfinished tail: one copy per read.
      let from = 0;
      // Most upstreams end lines with LF alone; only look for CRLF blank lines when a CR came.
      const crlf = buffer.includes('\r');
      for (;;) {
        const end = crlf ? eventEndCrlf(buffer, from) : buffer.indexOf('\n\n', from);
        if (end < 0) break;
        const data = dataOf(buffer, from, end);
        from = buffer.charCodeAt(end) === CR ? end + 4 : end + 2;
        if (data === undefined) continue;
        if (data === '[DONE]') {
          state.done = true;
          if (chunks.length > 0) yield chunks;
          return;
        }
        const parsed = parseChunk(data);
        if (parsed === undefined) {
          state.malformed += 1;
          if (state.malformed > MAX_MALFORMED_EVENTS) throw new MalformedStreamError(state.malformed);
          continue;
        }
        if (parsed.error) throw new StreamErrorEvent(parsed.error);
        chunks.push(parsed);
      }
      if (from > 0) buffer = buffer.slice(from);
      if (chunks.length > 0) yield chunks;
    }
  } finally {
    await source.return(undefined);
  }
}

/** A chunk, or undefined when the data is not a JSON object. */
function parseChunk(data: string): (ChatCompletionChunk & { error?: unknown }) | undefined {
  try {
    const parsed: unknown = JSON.parse(data);
    return typeof parsed === 'object' && parsed !== null
      ? (parsed as ChatCompletionChunk & { error?: unknown })
      : undefined;
  } catch {
    return undefined;
  }
}

/** undici's stream, decoded by the stream itself: each `next()` takes everything read so far. */
async function* nodeText(
  body: UpstreamBodyStream,
  drainTimeoutMs: number,
): AsyncGenerator<string, void, undefined> {
  body.setEncoding('utf8');
  const reads = body.iterator({ destroyOnReturn: false });
  try {
    for (;;) {
      const { done, value } = (await reads.next()) as IteratorResult<string, undefined>;
      if (done) return;
      yield value;
    }
  } finally {
    // After `[DONE]` the answer may still owe its last bytes: read them so the connection is
    // reused (at most 128 KiB, within the drain time; an upstream that holds the body open after
    // its answer loses the connection instead of keeping it).
    if (!body.readableEnded && !body.destroyed) {
      const drain = new AbortController();
      const timer = setTimeout(() => drain.abort(), drainTimeoutMs).unref();
      void body
        .dump({ limit: DRAIN_LIMIT_BYTES, signal: drain.signal })
        .catch(() => undefined)
        .finally(() => clearTimeout(timer));
    }
  }
}

async function* webText(body: ReadableStream<Uint8Array>): AsyncGenerator<string, void, undefined> {
  const decoder = new TextDecoder();
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield decoder.decode(value, { stream: true });
    }
  } finally {
    reader.releaseLock();
  }
}

const CR = 13;
const LF = 10;

/** Where the first complete event at or after `from` ends (its blank line, LF or CRLF), or -1. */
function eventEndCrlf(buffer: string, from: number): number {
  const lf = buffer.indexOf('\n\n', from);
  const crlf = buffer.indexOf('\r\n\r\n', from);
  if (crlf >= 0 && (lf < 0 || crlf < lf)) return crlf;
  return lf;
}

/** The `data:` payload of the event in `buffer[start, end)` (data lines join with newlines), or undefined. */
function dataOf(buffer: string, start: number, end: number): string | undefined {
  let data: string | undefined;
  let lineStart = start;
  while (lineStart < end) {
    let lineEnd = buffer.indexOf('\n', lineStart);
    if (lineEnd < 0 || lineEnd > end) lineEnd = end;
    const contentEnd = lineEnd > lineStart && buffer.charCodeAt(lineEnd - 1) === CR ? lineEnd - 1 : lineEnd;
    if (buffer.startsWith('data:', lineStart)) {
      const valueStart = buffer.charCodeAt(lineStart + 5) === 32 ? lineStart + 6 : lineStart + 5;
      const value = buffer.slice(valueStart, contentEnd);
      data = data === undefined ? value : `${data}\n${value}`;
    }
    lineStart = buffer.charCodeAt(lineEnd) === LF ? lineEnd + 1 : lineEnd;
    if (lineEnd === end) break;
  }
  return data;
}
