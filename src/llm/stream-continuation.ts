import {
  ContextLengthError,
  TurnAbortedError,
  UnsupportedParameterError,
  UpstreamError,
  type LlmProvider,
  type ModelEvent,
  type ModelRequest,
  type UpstreamAttempt,
  type UpstreamCallLog,
} from './llm.types.js';
import type { ResolvedTarget } from './upstream-targets.js';

/** The stream failures a continuation may repair: the transport broke, the model did not stop. */
export const CONTINUABLE_CODES: ReadonlySet<string> = new Set([
  'upstream_stream_interrupted',
  'upstream_stream_stalled',
  'upstream_malformed_response',
]);

/**
 * What a target has handed on to the client so far, to decide whether its answer can be
 * continued elsewhere: text only (a tool call or reasoning already relayed cannot be resumed).
 */
export class RelayedOutput {
  text = '';
  continuable = true;

  add(batch: ModelEvent[]): void {
    for (const event of batch) {
      if (event.type === 'text') this.text += event.delta;
      else if (event.type === 'tool_call' || event.type === 'reasoning') this.continuable = false;
    }
  }
}

export interface Continuation {
  inner: LlmProvider;
  request: ModelRequest;
  /** The target that continues, and its place in the attempts. */
  target: ResolvedTarget;
  /** The text the client has already received. */
  sent: string;
  /** The failure of the target that was cut: what the turn ends with if the continuation fails. */
  original: Error;
  log: UpstreamCallLog;
  budgetMs: number;
  /** The continuing target's breaker is told of the outcome. */
  outcome(failed: boolean): Promise<unknown>;
}

/**
 * Finishes an answer cut after its output started on one more target, at most once
 * (docs/resilience.md#continuation). A target declared `prefill: true` gets the conversation
 * with the text sent so far as a last assistant message and continues it. Any other target,
 * or a prefill target that refuses the prefill with a 400, is asked the original request again
 * (`replay`): its output is relayed only after it has reproduced the sent text exactly, and a
 * divergence stops it. The client sees one answer, never text twice. Whatever goes wrong, the
 * turn ends with the ORIGINAL failure: a refused prefill never hides why the answer was cut.
 */
export async function* continueAnswer(job: Continuation): AsyncIterable<ModelEvent[]> {
  const modes: ('prefill' | 'replay')[] = job.target.settings.prefill ? ['prefill', 'replay'] : ['replay'];
  for (const mode of modes) {
    const startedAt = performance.now();
    let relayed = false;
    const record = (outcome: string, httpStatus?: number) => {
      const attempt: UpstreamAttempt = {
        target: job.target.label,
        model: job.target.settings.model,
        index: job.target.index,
        outcome,
        continuation: mode,
        ...(relayed ? { answered: true as const } : {}),
        ...(httpStatus === undefined ? {} : { httpStatus }),
        durationMs: Math.round(performance.now() - startedAt),
      };
      job.log.attempts.push(attempt);
    };
    const replay = mode === 'replay' ? new Replay(job.sent) : undefined;
    const prefill = job.sent.trimEnd();
    // Providers refuse a prefill ending in whitespace; the trimmed part is dropped once if echoed.
    let echo = job.sent.slice(prefill.length);
    try {
      for await (const batch of job.inner.stream({
        ...job.request,
        messages:
          mode === 'prefill'
            ? [...job.request.messages, { role: 'assistant', content: prefill }]
            : job.request.messages,
        settings: job.target.settings,
        retry: { maxRetries: 0, budgetMs: job.budgetMs },
      })) {
        const out: ModelEvent[] = [];
        for (const event of batch) {
          if (event.type !== 'text') {
            // Reasoning of the continuing model is not part of the answer the client reads.
            if (event.type !== 'reasoning' && !replay?.pending) out.push(event);
            continue;
          }
          let delta = replay ? replay.take(event.delta) : event.delta;
          if (echo && delta) {
            const shared = commonPrefix(echo, delta);
            delta = delta.slice(shared);
            echo = delta.length === 0 ? echo.slice(shared) : '';
          }
          if (delta) out.push({ type: 'text', delta });
        }
        if (out.length === 0) continue;
        if (!relayed) {
          relayed = true;
          job.log.answeredBy = {
            target: job.target.label,
            model: job.target.settings.model,
            index: job.target.index,
            prices: job.target.settings.prices,
          };
        }
        yield out;
      }
      if (replay?.pending) throw new ReplayDiverged('the replayed answer was shorter than the sent text');
      record('completed');
      await job.outcome(false);
      return;
    } catch (error) {
      const code = error instanceof ReplayDiverged ? 'replay_diverged' : codeOf(error);
      record(code, error instanceof UpstreamError ? error.httpStatus : undefined);
      if (error instanceof TurnAbortedError) throw error;
      const refused =
        mode === 'prefill' &&
        !relayed &&
        (error instanceof UnsupportedParameterError ||
          (error instanceof UpstreamError && error.code === 'upstream_invalid_request'));
      if (refused) continue;
      if (CONTINUABLE_CODES.has(code)) await job.outcome(true);
      throw job.original;
    }
  }
  throw job.original;
}

/** The replayed answer stopped matching what the client already has. */
class ReplayDiverged extends Error {}

/** Swallows a replayed answer's text until it has reproduced `sent`, then lets the rest through. */
class Replay {
  private matched = 0;
  constructor(private readonly sent: string) {}

  get pending(): boolean {
    return this.matched < this.sent.length;
  }

  take(delta: string): string {
    if (!this.pending) return delta;
    const expected = this.sent.slice(this.matched, this.matched + delta.length);
    const shared = commonPrefix(expected, delta);
    if (shared < Math.min(expected.length, delta.length)) {
      throw new ReplayDiverged('the replayed answer differs from the sent text');
    }
    this.matched += shared;
    return delta.slice(shared);
  }
}

function commonPrefix(a: string, b: string): number {
  let index = 0;
  while (index < a.length && index < b.length && a[index] === b[index]) index += 1;
  return index;
}

/** The catalogue code of a failed model call, as attempts record it. */
export function codeOf(error: unknown): string {
  if (error instanceof UpstreamError) return error.code;
  if (error instanceof ContextLengthError) return 'context_length_exceeded';
  if (error instanceof TurnAbortedError) return 'aborted';
  return 'invalid_request';
}
