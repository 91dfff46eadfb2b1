import {
  ContextLengthError,
  TurnAbortedError,
  UpstreamError,
  type LlmProvider,
  type ModelEvent,
  type ModelRequest,
  type UpstreamAccess,
  type UpstreamAttempt,
} from './llm.types.js';
import { codeOf, CONTINUABLE_CODES, continueAnswer, RelayedOutput } from './stream-continuation.js';
import { CommittedTarget } from './committed-target.js';
import {
  nextBatch,
  OpenedStream,
  ReadBatches,
  readerOf,
  type ModelEventReader,
  type ModelEventStream,
  type Opened,
} from './model-event-stream.js';
import type { OpenAiCompatibleModelSettings } from './model-settings.js';
import { failoverCandidates, type Candidate } from './failover-candidates.js';
import type { UpstreamBreakers } from './upstream-breakers.js';
import type { UpstreamLoad } from './upstream-load.js';
import { FAILOVER_CODES } from './upstream-target-settings.js';
import type { ResolvedTarget } from './upstream-targets.js';

export interface FailoverOptions {
  /** Retries on the last target tried (UPSTREAM_MAX_RETRIES); the others fail over at once. */
  maxRetries: number;
  retryBudgetMs: number;
  failoverBudgetMs: number;
}

/**
 * A model call over an assistant's ordered targets (docs/resilience.md). A target that fails
 * before its first output (429, 5xx, a timeout, a connection error, a stream cut before any
 * output, as `failover.on` allows) hands the call to the next one, invisibly: the client has
 * seen nothing of it. Once a target's output has been handed on, that target owns the call and
 * a failure ends it, truthfully. A prompt too long for a target goes to the next target with a
 * larger declared context window; a content-policy refusal or an invalid request ends the call
 * at once, with the provider's reason. Every target tried is written to `request.log`.
 */
export class FailoverProvider implements LlmProvider {
  constructor(
    private readonly inner: LlmProvider,
    private readonly breakers: UpstreamBreakers,
    private readonly options: FailoverOptions,
    /** Calls running per target, every replica's with Redis (least-busy balancing). */
    private readonly load: UpstreamLoad,
  ) {}

  stream(request: ModelRequest): ModelEventStream {
    return new OpenedStream(() => this.open(request));
  }

  /**
   * Tries the targets in turn until one's output starts (or it completes without any); that
   * target then owns the call and is read directly by the turn (CommittedTarget).
   */
  private async open(request: ModelRequest): Promise<Opened> {
    const settings = request.settings as OpenAiCompatibleModelSettings;
    const policy = settings.failover ?? {};
    // The policy's own list (a few codes), asked only on a failure: no Set per call held by the stream.
    const failOn: readonly string[] = policy.on ?? FAILOVER_CODES;
    const deadline = performance.now() + (policy.budgetMs ?? this.options.failoverBudgetMs);
    const leastBusy = policy.balance === 'least-busy';
    const queue = await failoverCandidates(settings, request.access, leastBusy, this.breakers, this.load);
    // Nothing reaches a JSON client before the end: a target's output is held until it completed,
    // so a cut after output moves on to the next target as invisibly as one before it.
    const held: ModelEvent[][] | undefined = request.relayed === false && queue.length > 1 ? [] : undefined;
    const log = request.log ?? { attempts: [] };
    const cooling = queue.filter((candidate) => candidate.reading.state !== 'closed');
    if (cooling.length > 0)
      log.cooling = cooling.map((candidate) => `${candidate.target.label}:${candidate.reading.state}`);
    let lastError: Error | undefined;
    /** The window a prompt was too long for: only larger declared windows are tried after it. */
    let tooLongFor: number | undefined;
    for (let position = 0; position < queue.length; position++) {
      const { target, breaker, reading } = queue[position];
      const window = target.settings.contextWindow;
      if (tooLongFor !== undefined && !(window !== undefined && window > tooLongFor)) continue;
      if (position > 0 && performance.now() >= deadline) break;
      if (reading.state === 'half_open' && !queue[position].deferred && queue.length > 1) {
        // Another call holds the probe: try this target last, if at all.
        if (!(await this.breakers.claimProbe(reading.key))) {
          queue.push({ ...queue[position], deferred: true });
          continue;
        }
      }
      const last = queue.slice(position + 1).every((later) => later.target.index === target.index);
      const retries = policy.retriesPerTarget ?? (last ? this.options.maxRetries : 0);
      const startedAt = performance.now();
      const attempt = (outcome: string, httpStatus?: number): UpstreamAttempt => ({
        target: target.label,
        model: target.settings.model,
        index: target.index,
        outcome,
        ...(delivered ? { answered: true as const } : {}),
        ...(httpStatus === undefined ? {} : { httpStatus }),
        durationMs: Math.round(performance.now() - startedAt),
      });
      let delivered = false;
      // Only an assistant with continuation keeps the text it relayed (nothing per token otherwise).
      const relayed = policy.continuation ? new RelayedOutput() : undefined;
      const ended = leastBusy ? this.load.started(reading.key) : undefined;
      let committed = false;
      if (held) held.length = 0;
      const completed = async () => {
        log.attempts.push(attempt('completed'));
        if (reading.failures > 0) await this.breakers.succeeded(breaker, reading.key);
      };
      /** After a failure: the next target (undefined), a continuation's reader, or the call's end (throws). */
      const failed = async (error: unknown): Promise<ModelEventReader | undefined> => {
        const code = codeOf(error);
        log.attempts.push(attempt(code, error instanceof UpstreamError ? error.httpStatus : undefined));
        if (error instanceof TurnAbortedError) throw error;
        const countsAgainst = (FAILOVER_CODES as readonly string[]).includes(code);
        if (countsAgainst) await this.breakers.failed(breaker, reading.key);
        if (delivered) {
          // After output the client has part of this target's answer: never a second answer
          // spliced onto it; at most a continuation of it, when the assistant asked for one.
          const next = relayed?.continuable && CONTINUABLE_CODES.has(code) && performance.now() < deadline;
          const heir = next ? continuer(queue, position) : undefined;
          if (!heir || !relayed) throw error;
          return readerOf(
            continueAnswer({
              inner: this.inner,
              request: { ...request, access: accessFor(request.access, heir.target) },
              target: heir.target,
              sent: relayed.text,
              original: error as Error,
              log,
              budgetMs: Math.max(0, Math.min(this.options.retryBudgetMs, deadline - performance.now())),
              outcome: (failed) =>
                failed
                  ? this.breakers.failed(heir.breaker, heir.reading.key)
                  : heir.reading.failures > 0
                    ? this.breakers.succeeded(heir.breaker, heir.reading.key)
                    : Promise.resolve(),
            }),
          );
        }
        if (error instanceof ContextLengthError) tooLongFor = window ?? 0;
        else if (!failOn.includes(code)) throw error;
        lastError = error as Error;
        return undefined;
      };
      try {
        // Inside the try: a provider that throws at once is a failed attempt like any other.
        const inner = readerOf(
          this.inner.stream({
            ...request,
            settings: target.settings,
            access: accessFor(request.access, target),
            retry: {
              maxRetries: retries,
              budgetMs: Math.max(0, Math.min(this.options.retryBudgetMs, deadline - performance.now())),
            },
          }),
        );
        const first = await nextBatch(inner);
        if (held) {
          for (let batch = first; batch !== undefined; batch = await nextBatch(inner)) held.push(batch);
          if (held.length > 0) {
            delivered = true;
            answered(log, target);
          }
          await completed();
          return { reader: new ReadBatches(held), first: undefined };
        }
        if (first === undefined) {
          await completed();
          return { reader: inner, first: undefined };
        }
        delivered = true;
        answered(log, target);
        relayed?.add(first);
        committed = true;
        const outcomes = {
          relayed: relayed && ((batch: ModelEvent[]) => relayed.add(batch)),
          completed,
          failed: async (error: unknown) => {
            const continuation = await failed(error);
            if (!continuation) throw error;
            return continuation;
          },
          done: () => ended?.(),
        };
        return { reader: new CommittedTarget(inner, outcomes), first };
      } catch (error) {
        const continuation = await failed(error);
        if (continuation) return { reader: continuation, first: undefined };
      } finally {
        if (!committed) ended?.();
      }
    }
    throw lastError ?? new UpstreamError('upstream_unavailable', 'No upstream target could take the call');
  }
}

/** Marks the target whose output the turn receives: its model names the answer, its prices the usage. */
function answered(log: NonNullable<ModelRequest['log']>, target: ResolvedTarget): void {
  log.answeredBy = {
    target: target.label,
    model: target.settings.model,
    index: target.index,
    prices: target.settings.prices,
  };
}

/**
 * Who continues an answer cut on `queue[position]`: the next other target declared
 * prefill-capable, else the next other target (which replays the answer).
 */
function continuer(queue: Candidate[], position: number): Candidate | undefined {
  const cut = queue[position].target.index;
  const others = queue.slice(position + 1).filter((candidate) => candidate.target.index !== cut);
  return others.find((candidate) => candidate.target.settings.prefill) ?? others[0];
}

/** The access of one target: its own key, the same guard and pools as its assistant's. */
function accessFor(access: UpstreamAccess | undefined, target: ResolvedTarget): UpstreamAccess | undefined {
  if (!access || target.index === 0) return access;
  const name = target.settings.apiKeyEnv;
  return { ...access, apiKey: name === undefined ? undefined : access.apiKeys?.[name] };
}
