import type { TurnProgress } from '../turns/turn-plan.js';
import type { TurnRecord } from '../turns/turn.types.js';
import type { ResponseObject } from './response-view.js';

/** Token usage in the Response object's shape, with the upstream's cached and reasoning tokens. */
export function usageOf(progress: TurnProgress): NonNullable<ResponseObject['usage']> {
  const usage = progress.usage;
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: usage.cachedTokens },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}

/** The turn's usage by model and currency for the rollups; the first row counts the turn. */
export function usageRows(progress: TurnProgress): TurnRecord['usageRows'] {
  // A turn the upstream reported nothing for still counts as a turn (model not known: '').
  const spend =
    progress.spend.size > 0
      ? [...progress.spend.values()]
      : [{ ...progress.usage, model: '', currency: '', cost: 0 }];
  return spend.map((spent, index) => ({
    model: spent.model,
    currency: spent.currency,
    turns: index === 0 ? 1 : 0,
    inputTokens: spent.inputTokens,
    cachedTokens: spent.cachedTokens,
    outputTokens: spent.outputTokens,
    reasoningTokens: spent.reasoningTokens,
    cost: spent.cost,
  }));
}
