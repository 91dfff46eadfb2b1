import type { Response } from 'express';
import type { EventSink } from './response-recorder.js';

/**
 * Writes one Server-Sent Events stream on the raw response: each event as one piece of text,
 * the events of one upstream chunk joined into one `write` (cork/uncork: one HTTP chunk, one
 * socket write, instead of four buffered writes per event), `: heartbeat` after a quiet
 * period, never compressed. Writing is synchronous; the turn waits on `drain()` between
 * batches only when the socket buffer is full, so a slow reader pauses the turn instead of
 * growing a buffer, and a fast one costs no promise per token.
 */
export class SseWriter implements EventSink {
  private heartbeat: NodeJS.Timeout | undefined;
  /** When the last write went out (performance.now()): the heartbeat's timer checks it. */
  private lastWrite = 0;
  private closed = false;
  private full = false;
  /** Nested cork() calls, and the text of the events written while corked. */
  private corked = 0;
  private pending = '';
  private opened = false;

  constructor(
    private readonly res: Response,
    private readonly heartbeatMs: number,
  ) {}

  open(): void {
    this.res.status(200);
    this.res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    this.res.setHeader('Cache-Control', 'no-cache, no-transform');
    this.res.setHeader('Connection', 'keep-alive');
    this.res.setHeader('X-Accel-Buffering', 'no');
    this.opened = true;
    // Corked, the headers wait for the first events and leave in the same socket write (uncork).
    if (this.corked === 0) this.res.flushHeaders();
    this.res.socket?.setNoDelay(true);
    this.armHeartbeat();
  }

  get isClosed(): boolean {
    return this.closed || this.res.destroyed;
  }

  event(type: string, payload: object): void {
    this.write(`event: ${type}\ndata: ${JSON.stringify(payload)}\n\n`);
  }

  eventJson(type: string, _sequence: number, json: string): void {
    this.write(`event: ${type}\ndata: ${json}\n\n`);
  }

  /** An event already serialized (a replay of a stored one), written as it is. */
  frame(text: string): void {
    this.write(text);
  }

  cork(): void {
    this.corked++;
  }

  uncork(): void {
    if (this.corked === 0 || --this.corked > 0) return;
    if (this.pending.length === 0) {
      // Only a stream that was opened: before open() the reply may still be an HTTP error.
      if (this.opened && !this.res.headersSent && !this.isClosed) this.res.flushHeaders();
      return;
    }
    const text = this.pending;
    this.pending = '';
    this.send(text);
  }

  /** Undefined when the socket can take more; otherwise resolves on `drain` (or close). */
  drain(): Promise<void> | undefined {
    if (!this.full || this.isClosed) return undefined;
    return new Promise<void>((resolve) => {
      const settle = () => {
        this.res.off('drain', settle);
        this.res.off('close', settle);
        this.full = false;
        resolve();
      };
      this.res.on('drain', settle);
      this.res.on('close', settle);
    });
  }

  done(): void {
    this.write('data: [DONE]\n\n');
    this.close();
  }

  close(): void {
    if (this.closed) return;
    this.corked = 0;
    if (this.pending.length > 0) this.send(this.pending);
    this.pending = '';
    this.closed = true;
    clearTimeout(this.heartbeat);
    if (!this.res.writableEnded) this.res.end();
  }

  private write(chunk: string): void {
    if (this.corked > 0) this.pending += chunk;
    else this.send(chunk);
  }

  private send(chunk: string): void {
    if (this.isClosed) return;
    // A stamp per write, not a timer re-armed per token: the timer looks at it when it fires.
    if (this.heartbeat === undefined) this.armHeartbeat();
    else this.lastWrite = performance.now();
    if (!this.res.write(chunk)) this.full = true;
  }

  /** One timer for the whole stream: it fires when the period since the last write may be over. */
  private armHeartbeat(): void {
    this.lastWrite = performance.now();
    this.heartbeat = setTimeout(this.beat, this.heartbeatMs);
    this.heartbeat.unref();
  }

  /** `: heartbeat` once `heartbeatMs` passed without a write; otherwise waits out the rest. */
  private readonly beat = (): void => {
    if (this.isClosed) return;
    const quiet = performance.now() - this.lastWrite;
    if (quiet < this.heartbeatMs) {
      // Whole milliseconds: a fractional delay would start a timer list of its own per re-arm.
      this.heartbeat = setTimeout(this.beat, Math.ceil(this.heartbeatMs - quiet));
      this.heartbeat.unref();
      return;
    }
    this.res.write(': heartbeat\n\n');
    this.armHeartbeat();
  };
}
