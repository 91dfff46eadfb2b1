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
import type { OpenAiCompatibleModelSettings } from './model-settings.js';
import { deferCooling, targetOrder } from './target-order.js';
import type { BreakerReading, BreakerTarget, UpstreamBreakers } from './upstream-breakers.js';
import { FAILOVER_CODES } from './upstream-target-settings.js';
import { upstreamTargets, type ResolvedTarget } from './upstream-targets.js';

export interface FailoverOptions {
  /** Retries on the last target tried (UPSTREAM_MAX_RETRIES); the others fail over at once. */
  maxRetries: number;
  retryBudgetMs: number;
  failoverBudgetMs: number;
}

interface Candidate {
  target: ResolvedTarget;
  breaker: BreakerTarget;
  reading: BreakerReading;
  /** Half-open with its probe taken by another call: tried at the back, without a probe. */
  deferred?: boolean;
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
  ) {}

  async *stream(request: ModelRequest): AsyncIterable<ModelEvent[]> {
    const settings = request.settings as OpenAiCompatibleModelSettings;
    const policy = settings.failover ?? {};
    const failOn = new Set<string>(policy.on ?? FAILOVER_CODES);
    const deadline = performance.now() + (policy.budgetMs ?? this.options.failoverBudgetMs);
    const queue = await this.candidates(settings, request.access);
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
      try {
        for await (const batch of this.inner.stream({
          ...request,
          settings: target.settings,
          access: accessFor(request.access, target),
          retry: {
            maxRetries: retries,
            budgetMs: Math.max(0, Math.min(this.options.retryBudgetMs, deadline - performance.now())),
          },
        })) {
          if (!delivered) {
            delivered = true;
            log.answeredBy = {
              target: target.label,
              model: target.settings.model,
              index: target.index,
              prices: target.settings.prices,
            };
          }
          yield batch;
        }
        log.attempts.push(attempt('completed'));
        if (reading.failures > 0) await this.breakers.succeeded(breaker, reading.key);
        return;
      } catch (error) {
        const code = codeOf(error);
        log.attempts.push(attempt(code, error instanceof UpstreamError ? error.httpStatus : undefined));
        if (error instanceof TurnAbortedError) throw error;
        const countsAgainst = (FAILOVER_CODES as readonly string[]).includes(code);
        if (countsAgainst) await this.breakers.failed(breaker, reading.key);
        // After output the target owns the call: never a second answer spliced onto the first.
        if (delivered) throw error;
        if (error instanceof ContextLengthError) tooLongFor = window ?? 0;
        else if (!failOn.has(code)) throw error;
        lastError = error as Error;
      }
    }
    throw lastError ?? new UpstreamError('upstream_unavailable', 'No upstream target could take the call');
  }

  /** The targets in the order they are tried: pools drawn by weight, cooling ones at the back. */
  private async candidates(
    settings: OpenAiCompatibleModelSettings,
    access: UpstreamAccess | undefined,
  ): Promise<Candidate[]> {
    const order = targetOrder(upstreamTargets(settings));
    const breakers = order.map(({ settings: target, label }) => ({
      scope: access?.scope ?? '',
      baseUrl: target.baseUrl,
      model: target.model,
      apiKeyEnv: target.apiKeyEnv,
      label,
    }));
    const readings = await this.breakers.read(breakers);
    const candidates = order.map((target, index) => ({
      target,
      breaker: breakers[index],
      reading: readings[index],
    }));
    return deferCooling(candidates, (candidate) => candidate.reading.state === 'open');
  }
}

function codeOf(error: unknown): string {
  if (error instanceof UpstreamError) return error.code;
  if (error instanceof ContextLengthError) return 'context_length_exceeded';
  if (error instanceof TurnAbortedError) return 'aborted';
  return 'invalid_request';
}

/** The access of one target: its own key, the same guard and pools as its assistant's. */
function accessFor(access: UpstreamAccess | undefined, target: ResolvedTarget): UpstreamAccess | undefined {
  if (!access || target.index === 0) return access;
  const name = target.settings.apiKeyEnv;
  return { ...access, apiKey: name === undefined ? undefined : access.apiKeys?.[name] };
}
