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
  private closed = false;
  private full = false;
  /** Nested cork() calls, and the text of the events written while corked. */
  private corked = 0;
  private pending = '';

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
    this.res.flushHeaders();
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
    if (this.corked === 0 || --this.corked > 0 || this.pending.length === 0) return;
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
    this.armHeartbeat();
    if (!this.res.write(chunk)) this.full = true;
  }

  /** Restarts the quiet-period timer; `refresh()` reuses one timer for the whole stream. */
  private armHeartbeat(): void {
    if (this.heartbeat) {
      this.heartbeat.refresh();
      return;
    }
    this.heartbeat = setTimeout(() => {
      if (this.isClosed) return;
      this.res.write(': heartbeat\n\n');
      this.heartbeat = undefined;
      this.armHeartbeat();
    }, this.heartbeatMs);
    this.heartbeat.unref();
  }
}
