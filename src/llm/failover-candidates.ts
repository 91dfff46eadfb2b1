import type { OpenAiCompatibleModelSettings } from './model-settings.js';
import type { UpstreamAccess } from './llm.types.js';
import { deferCooling, targetOrder } from './target-order.js';
import type { BreakerReading, BreakerTarget, UpstreamBreakers } from './upstream-breakers.js';
import type { UpstreamLoad } from './upstream-load.js';
import { upstreamTargets, type ResolvedTarget } from './upstream-targets.js';

/** One target of a model call's failover, with its circuit breaker's reading. */
export interface Candidate {
  target: ResolvedTarget;
  breaker: BreakerTarget;
  reading: BreakerReading;
  /** Half-open with its probe taken by another call: tried at the back, without a probe. */
  deferred?: boolean;
}

/** The targets in the order they are tried (FailoverProvider): pools drawn by weight, cooling ones at the back. */
export async function failoverCandidates(
  settings: OpenAiCompatibleModelSettings,
  access: UpstreamAccess | undefined,
  leastBusy: boolean,
  breakers: UpstreamBreakers,
  load: UpstreamLoad,
): Promise<Candidate[]> {
  const breakerOf = ({ settings: target, label }: ResolvedTarget): BreakerTarget => ({
    scope: access?.scope ?? '',
    baseUrl: target.baseUrl,
    model: target.model,
    apiKeyEnv: target.apiKeyEnv,
    label,
  });
  const targets = upstreamTargets(settings);
  let busy: ((target: ResolvedTarget) => number) | undefined;
  if (leastBusy) {
    // Only members of a pool are ordered by load: a lone target costs no read.
    const pooled = targets.filter((target, index) =>
      [targets[index - 1], targets[index + 1]].some((next) => next?.settings.model === target.settings.model),
    );
    const running = await load.counts(pooled.map((target) => breakers.keyOf(breakerOf(target))));
    busy = (target) => running[pooled.indexOf(target)] ?? 0;
  }
  const order = targetOrder(targets, Math.random, busy);
  const breakerTargets = order.map(breakerOf);
  const readings = await breakers.read(breakerTargets);
  const candidates = order.map((target, index) => ({
    target,
    breaker: breakerTargets[index],
    reading: readings[index],
  }));
  return deferCooling(candidates, (candidate) => candidate.reading.state === 'open');
}
