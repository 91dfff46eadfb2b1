import type { UpstreamBodyStream } from './upstream-fetch.js';

/** After `[DONE]` or an early stop, the rest of the body gets this long to arrive for reuse. */
const DRAIN_LIMIT_BYTES = 128 * 1024;

/**
 * The text of an answer's body: `read()` takes what arrived (null when nothing yet, undefined at
 * its end; it throws the body's failure), `readable()` resolves once `read()` has news. It never
 * rejects: a failure is `read()`'s to throw, where the provider classifies it.
 */
export interface TextSource {
  read(): string | null | undefined;
  readable(): Promise<void>;
  /** Stops reading (at the end, or early); never destroys the body. */
  release(): void;
}

/**
 * undici's stream, decoded by the stream itself: each `read()` takes everything read so far. Four
 * listeners and one promise per wait, held for the whole answer: the stream's own async iterator
 * (`body.iterator()`) keeps an end-of-stream watcher, some twenty closures and a generator per
 * open stream, which a slow stream holds for minutes. It behaves the same: buffered text comes
 * before the stream's error, and a body closed before its end is an error ("Premature close").
 */
export class NodeBodyText implements TextSource {
  private wake: (() => void) | undefined;
  private ended = false;
  private failure: Error | undefined;

  constructor(
    private readonly body: UpstreamBodyStream,
    private readonly drainTimeoutMs: number,
  ) {
    body.setEncoding('utf8');
    if (body.errored) this.failure = body.errored;
    else if (body.readableEnded) this.ended = true;
    // Destroyed before this reader came: its 'close' has fired, and nothing would wake a wait.
    else if (body.destroyed) this.failure = prematureClose();
    body.on('readable', this.notify);
    body.on('end', this.onEnd);
    body.on('error', this.onError);
    body.on('close', this.onClose);
  }

  read(): string | null | undefined {
    const text = this.body.destroyed ? null : (this.body.read() as string | null);
    if (text !== null) return text;
    if (this.failure) throw this.failure;
    return this.ended ? undefined : null;
  }

  readable(): Promise<void> {
    return new Promise<void>((resolve) => (this.wake = resolve));
  }

  release(): void {
    const body = this.body;
    body.off('readable', this.notify);
    body.off('end', this.onEnd);
    body.off('error', this.onError);
    body.off('close', this.onClose);
    this.wake = undefined;
    // After `[DONE]` the answer may still owe its last bytes: read them so the connection is
    // reused (at most 128 KiB, within the drain time; an upstream that holds the body open after
    // its answer loses the connection instead of keeping it).
    if (!body.readableEnded && !body.destroyed) {
      const drain = new AbortController();
      const timer = setTimeout(() => drain.abort(), this.drainTimeoutMs).unref();
      void body
        .dump({ limit: DRAIN_LIMIT_BYTES, signal: drain.signal })
        .catch(() => undefined)
        .finally(() => clearTimeout(timer));
    }
  }

  private readonly notify = (): void => {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  };

  private readonly onEnd = (): void => {
    this.ended = true;
    this.notify();
  };

  private readonly onError = (error: Error): void => {
    this.failure ??= error;
    this.notify();
  };

  private readonly onClose = (): void => {
    if (!this.ended && !this.failure) this.failure = prematureClose();
    this.notify();
  };
}

/** What Node's stream iterator throws for a body closed before its end. */
function prematureClose(): Error {
  return Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
}

/** A web stream's body (a fetch Response's), decoded as it is read: one chunk per `readable()`. */
export class WebBodyText implements TextSource {
  private readonly decoder = new TextDecoder();
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;

  constructor(body: ReadableStream<Uint8Array>) {
    this.reader = body.getReader();
  }

  /** What the last `readable()` fetched: null until then, undefined at the end. */
  private fetched: string | null | undefined = null;
  private failure: { error: unknown } | undefined;

  read(): string | null | undefined {
    const text = this.fetched;
    if (text !== undefined) this.fetched = null;
    if (text === null && this.failure) throw this.failure.error;
    return text;
  }

  async readable(): Promise<void> {
    try {
      const { done, value } = await this.reader.read();
      this.fetched = done ? undefined : this.decoder.decode(value, { stream: true });
    } catch (error) {
      this.failure = { error };
    }
  }

  release(): void {
    this.reader.releaseLock();
  }
}
