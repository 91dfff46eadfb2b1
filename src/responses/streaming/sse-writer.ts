import type { Response } from 'express';

/**
 * Writes one Server-Sent Events stream on the raw response: each event in a single write,
 * `: heartbeat` after a quiet period, backpressure honoured (a slow reader pauses the turn
 * instead of growing a buffer), never compressed.
 */
export class SseWriter {
  private heartbeat: NodeJS.Timeout | undefined;
  private closed = false;

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

  /** Resolves once the event is handed to the socket, waiting for `drain` when it is full. */
  async event(type: string, payload: object): Promise<void> {
    await this.write(`event: ${type}\ndata: ${JSON.stringify(payload)}\n\n`);
  }

  async done(): Promise<void> {
    await this.write('data: [DONE]\n\n');
    this.close();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.heartbeat);
    if (!this.res.writableEnded) this.res.end();
  }

  private async write(chunk: string): Promise<void> {
    if (this.isClosed) return;
    this.armHeartbeat();
    if (!this.res.write(chunk)) {
      await new Promise<void>((resolve) => {
        const settle = () => {
          this.res.off('drain', settle);
          this.res.off('close', settle);
          resolve();
        };
        this.res.on('drain', settle);
        this.res.on('close', settle);
      });
    }
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
