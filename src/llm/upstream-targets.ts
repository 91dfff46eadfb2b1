import type { OpenAiCompatibleModelSettings } from './model-settings.js';

/** A target of a model call as the provider runs it: the settings it is called with. */
export interface ResolvedTarget {
  /** Position in the declared order (0: the settings' own). */
  index: number;
  settings: OpenAiCompatibleModelSettings;
  weight: number;
  /** What an operator reads in attempts and health: model and host, never a key. */
  label: string;
}

/** The declared targets, in order: the settings' own first, then `fallbacks`. */
export function upstreamTargets(settings: OpenAiCompatibleModelSettings): ResolvedTarget[] {
  const { fallbacks, failover, weight, ...own } = settings;
  void failover;
  const first: ResolvedTarget = { index: 0, settings: own, weight: weight ?? 1, label: labelOf(own) };
  return [
    first,
    ...(fallbacks ?? []).map((target, position) => {
      const resolved: OpenAiCompatibleModelSettings = {
        ...own,
        baseUrl: target.baseUrl,
        model: target.model,
        apiKeyEnv: target.apiKeyEnv,
        contextWindow: target.contextWindow,
        maxTokensParameter: target.maxTokensParameter ?? own.maxTokensParameter,
        prices: target.prices ?? own.prices,
        prefill: target.prefill,
      };
      return {
        index: position + 1,
        settings: resolved,
        weight: target.weight ?? 1,
        label: labelOf(resolved),
      };
    }),
  ];
}

/** The fallbacks of settings for the admin CLI: `; then b@host, c@host` (empty without any). */
export function fallbacksText(settings: OpenAiCompatibleModelSettings): string {
  const fallbacks = upstreamTargets(settings).slice(1);
  return fallbacks.length === 0 ? '' : `; then ${fallbacks.map((target) => target.label).join(', ')}`;
}

function labelOf(settings: { baseUrl: string; model: string }): string {
  let host = settings.baseUrl;
  try {
    host = new URL(settings.baseUrl).host;
  } catch {
    // Validated when written; a label is never worth a failure.
  }
  return `${settings.model}@${host}`;
}
