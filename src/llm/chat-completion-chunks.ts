import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { MalformedStreamError, StreamErrorEvent } from './upstream-failure.js';
import { NodeBodyText, WebBodyText, type TextSource } from './body-text.js';
import type { UpstreamBodyStream } from './upstream-fetch.js';

/** More malformed events than this in one stream abandon it: it is not a glitch any more. */
export const MAX_MALFORMED_EVENTS = 16;

/**
 * Reads a Chat Completions event stream: each `read()` gives the chunks one network read
 * completed, synchronously (null when none has completed yet: wait on `readable()`; undefined at
 * the end). The SDK's own stream iterator yields one chunk at a time through several async
 * generators; batching per read lets a turn relay a burst of tokens in one socket write, and a
 * synchronous read lets the layers above it (provider, failover) pass a read on without an async
 * hop each: the turn's loop awaits `readable()`, one promise per wait. A malformed event is
 * skipped and counted; an `{"error": …}` event ends the stream with its error. Call `release()`
 * when done with it, whatever happened.
 */
export class ChatCompletionChunks {
  /** `[DONE]` came. */
  done = false;
  /** Events whose data is not a JSON object (skipped; see docs/resilience.md). */
  malformed = 0;
  private readonly source: TextSource;
  private buffer = '';

  constructor(body: UpstreamBodyStream | ReadableStream<Uint8Array>, drainTimeoutMs = 30_000) {
    this.source = 'getReader' in body ? new WebBodyText(body) : new NodeBodyText(body, drainTimeoutMs);
  }

  /**
   * The chunks of the next read that completed any; null when no chunk is complete yet (then
   * `readable()`); undefined once the stream ended or said `[DONE]`. Throws the body's failure.
   */
  read(): ChatCompletionChunk[] | null | undefined {
    while (!this.done) {
      const value = this.source.read();
      if (value === null) return null;
      if (value === undefined) return undefined;
      const buffer = this.buffer + value;
      // Made on the first chunk as `[chunk]`: a read usually has one, and an empty array grown
      // by push() takes room for 17.
      let chunks: ChatCompletionChunk[] | undefined;
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
          this.done = true;
          this.buffer = '';
          return chunks;
        }
        const parsed = parseChunk(data);
        if (parsed === undefined) {
          this.malformed += 1;
          if (this.malformed > MAX_MALFORMED_EVENTS) throw new MalformedStreamError(this.malformed);
          continue;
        }
        if (parsed.error) throw new StreamErrorEvent(parsed.error);
        if (chunks === undefined) chunks = [parsed];
        else chunks.push(parsed);
      }
      this.buffer = from > 0 ? buffer.slice(from) : buffer;
      if (chunks !== undefined) return chunks;
    }
    return undefined;
  }

  /** Resolves once `read()` may have news (after it returned null). */
  readable(): Promise<void> {
    return this.source.readable();
  }

  /** Stops reading (at the end, or early); never destroys the body. */
  release(): void {
    this.source.release();
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
