import type { ModelEvent } from './llm.types.js';

/**
 * A model call's events read one upstream read at a time, with one async hop per read for the
 * whole call: `read()` is synchronous through every layer (failover, provider, chunk reader), and
 * only the reader of the turn awaits, on `readable()`, when nothing has arrived. An async
 * generator per layer costs a promise, an IteratorResult and a microtask hop per read, per layer.
 */
export interface ModelEventReader {
  /**
   * The events of the next read (never empty); null when nothing has arrived yet (then await
   * `readable()`); undefined once the call completed. Throws the call's failure.
   */
  read(): ModelEvent[] | null | undefined;
  /** Resolves once `read()` may have news. Never rejects: failures are `read()`'s to throw. */
  readable(): Promise<void>;
  /** The reader gives up before the end (it failed itself, or the turn ended): releases the upstream. */
  close(): void;
}

/** A reader that is also an async iterable, for callers that do not count hops (tests, continuations). */
export abstract class ModelEventStream implements ModelEventReader, AsyncIterable<ModelEvent[]> {
  abstract read(): ModelEvent[] | null | undefined;
  abstract readable(): Promise<void>;
  abstract close(): void;

  async *[Symbol.asyncIterator](): AsyncGenerator<ModelEvent[]> {
    let ended = false;
    try {
      for (let batch = await nextBatch(this); batch !== undefined; batch = await nextBatch(this)) yield batch;
      ended = true;
    } finally {
      // A failure of read() has released the call already; an iteration given up has not.
      if (!ended) this.close();
    }
  }
}

/** The reader of a provider's stream: itself when it is one, else an adapter of its iterator. */
export function readerOf(stream: AsyncIterable<ModelEvent[]>): ModelEventReader {
  return stream instanceof ModelEventStream ? stream : new IteratorReader(stream[Symbol.asyncIterator]());
}

/** The next batch of `reader`, waiting for it; undefined at the end. */
export async function nextBatch(reader: ModelEventReader): Promise<ModelEvent[] | undefined> {
  for (;;) {
    const batch = reader.read();
    if (batch !== null) return batch;
    await reader.readable();
  }
}

/** What a call's opening hands on: the reader that owns the call, and its first batch if any. */
export interface Opened {
  reader: ModelEventReader;
  first: ModelEvent[] | undefined;
}

/**
 * A call in two phases: `open` (connecting, retries, failover: everything that may still change
 * who answers, all before the first output) runs once, on the first wait; then the reader it
 * opened is read directly, with no level of its own per read.
 */
export class OpenedStream extends ModelEventStream {
  private reader: ModelEventReader | undefined;
  private first: ModelEvent[] | undefined;
  private opening: Promise<void> | undefined;
  private failure: { error: unknown } | undefined;
  private closed = false;

  constructor(private readonly open: () => Promise<Opened>) {
    super();
  }

  read(): ModelEvent[] | null | undefined {
    const reader = this.reader;
    if (reader === undefined) {
      if (this.failure) throw this.failure.error;
      return null;
    }
    const first = this.first;
    if (first === undefined) return reader.read();
    this.first = undefined;
    return first;
  }

  readable(): Promise<void> {
    if (this.reader) return this.reader.readable();
    this.opening ??= this.open().then(
      (opened) => {
        if (this.closed) opened.reader.close();
        this.reader = opened.reader;
        this.first = opened.first;
      },
      (error: unknown) => {
        this.failure = { error };
      },
    );
    return this.opening;
  }

  close(): void {
    // During opening this only marks the reader for closing once opened: the turn's loop cannot
    // leave while it awaits readable(), and a departure cuts the opening through the request's signal.
    this.closed = true;
    this.reader?.close();
  }
}

/** Batches already read in full (a held answer): nothing to wait for. */
export class ReadBatches implements ModelEventReader {
  private position = 0;

  constructor(private readonly batches: ModelEvent[][]) {}

  read(): ModelEvent[] | undefined {
    return this.position < this.batches.length ? this.batches[this.position++] : undefined;
  }

  readable(): Promise<void> {
    return Promise.resolve();
  }

  close(): void {
    this.position = this.batches.length;
  }
}

/** A provider written as an async generator (the offline model, a continuation, test doubles). */
class IteratorReader implements ModelEventReader {
  private result: IteratorResult<ModelEvent[]> | undefined;
  private failure: { error: unknown } | undefined;
  private over = false;

  constructor(private readonly iterator: AsyncIterator<ModelEvent[]>) {}

  read(): ModelEvent[] | null | undefined {
    if (this.failure) throw this.failure.error;
    if (this.over) return undefined;
    const result = this.result;
    if (result === undefined) return null;
    this.result = undefined;
    if (result.done) {
      this.over = true;
      return undefined;
    }
    return result.value;
  }

  async readable(): Promise<void> {
    try {
      this.result = await this.iterator.next();
    } catch (error) {
      this.over = true;
      this.failure = { error };
    }
  }

  close(): void {
    if (this.over) return;
    this.over = true;
    this.iterator.return?.().catch(() => undefined);
  }
}
