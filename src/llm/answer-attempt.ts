import { ChatCompletionChunks } from './chat-completion-chunks.js';
import { translate } from './chat-completion-events.js';
import type { ModelEvent } from './llm.types.js';
import { nextBatch, type ModelEventReader } from './model-event-stream.js';
import { UpstreamDeadlines, type UpstreamDeadlineLimits } from './upstream-deadlines.js';
import type { UpstreamBodyStream } from './upstream-fetch.js';
import { classifyUpstreamFailure, StreamEndedEarlyError } from './upstream-failure.js';
import { RetryableUpstreamError } from './upstream-retry.js';
import { WellFormedDeltas } from './well-formed-text.js';

type AnswerBody = UpstreamBodyStream | ReadableStream<Uint8Array>;

/**
 * One attempt of a Chat Completions call: its deadlines, its abort, and its body read into model
 * events, synchronously per read (OpenAiCompatibleProvider). Whatever fails is thrown classified
 * (docs/resilience.md): retryable only before this attempt's output started. An answer is
 * complete only once a chunk carried its finish reason. Released at its end, at its failure, or
 * on `close()`.
 */
export class AnswerAttempt implements ModelEventReader {
  private readonly controller = new AbortController();
  private readonly deadlines: UpstreamDeadlines;
  private readonly text = new WellFormedDeltas();
  private chunks: ChatCompletionChunks | undefined;
  private outputStarted = false;
  private finished = false;
  private usage = false;
  /** Released: the answer ended, failed, or was closed (then `failure` says which). */
  private over = false;
  /** Thrown by every read once the attempt failed or was closed before its end. */
  private failure: { error: unknown } | undefined;

  constructor(
    private readonly limits: UpstreamDeadlineLimits,
    /** The turn's signal: the client went away, or the service is shutting down. */
    private readonly signal: AbortSignal,
  ) {
    this.deadlines = new UpstreamDeadlines(limits, this.controller);
    signal.addEventListener('abort', this.onClientAbort, { once: true });
  }

  /**
   * Sends the request (`send` resolves to the answer's body) and waits for the first events:
   * undefined when the answer completed without any. Rejects with the classified failure.
   */
  async first(send: (signal: AbortSignal) => Promise<AnswerBody | null>): Promise<ModelEvent[] | undefined> {
    try {
      const body = await send(this.controller.signal);
      this.deadlines.headersArrived();
      if (!body) throw new StreamEndedEarlyError(0);
      this.chunks = new ChatCompletionChunks(body, this.limits.stallMs);
    } catch (error) {
      throw this.failed(error) ?? error;
    }
    return nextBatch(this);
  }

  read(): ModelEvent[] | null | undefined {
    if (this.failure) throw this.failure.error;
    if (this.over) return undefined;
    const chunks = this.chunks as ChatCompletionChunks;
    try {
      for (;;) {
        const read = chunks.read();
        if (read === null) return null;
        if (read === undefined) return this.ended(chunks);
        const events: ModelEvent[] = [];
        for (const chunk of read) {
          if (chunk.choices?.[0]?.finish_reason) this.finished = true;
          if (chunk.usage) this.usage = true;
          translate(chunk, this.text, events);
        }
        this.deadlines.progressed(events.length > 0);
        // Finished and counted: the answer is whole, whether or not `[DONE]` follows.
        if (this.finished && this.usage) this.release();
        if (events.length > 0) {
          this.outputStarted = true;
          return events;
        }
        if (this.over) return undefined;
      }
    } catch (error) {
      const failure = this.failed(error);
      if (failure === undefined) return undefined;
      throw failure;
    }
  }

  readable(): Promise<void> {
    return (this.chunks as ChatCompletionChunks).readable();
  }

  close(): void {
    // Given up before its end, the answer is not whole: a later read must not take it for one.
    if (!this.over) this.failure = { error: new Error('The answer attempt was closed before its end') };
    this.release();
  }

  /** The body ended: complete only after a finish reason. */
  private ended(chunks: ChatCompletionChunks): undefined {
    // The SDK may end an aborted stream quietly; an abort is never a complete answer.
    if (this.controller.signal.aborted && !this.finished) throw new Error('aborted');
    if (!this.finished) throw new StreamEndedEarlyError(chunks.malformed, chunks.done);
    this.release();
    return undefined;
  }

  /** What a failure means to the call, or undefined when the answer is whole after all. */
  private failed(error: unknown): Error | undefined {
    this.release();
    // Silent after its finish reason: the answer is whole, only its usage (or `[DONE]`) is missing.
    if (this.finished && this.deadlines.expired !== null && !this.signal.aborted) return undefined;
    const failure = classifyUpstreamFailure(error, {
      deadlines: this.deadlines,
      clientAborted: this.signal.aborted,
      outputStarted: this.outputStarted,
    });
    // Once a token reached the turn, a failure ends it: never retried.
    const final =
      this.outputStarted && failure instanceof RetryableUpstreamError ? failure.upstream : failure;
    this.failure = { error: final };
    return final;
  }

  private release(): void {
    if (this.over) return;
    this.over = true;
    this.chunks?.release();
    this.deadlines.clear();
    this.signal.removeEventListener('abort', this.onClientAbort);
  }

  private readonly onClientAbort = (): void => this.controller.abort();
}
