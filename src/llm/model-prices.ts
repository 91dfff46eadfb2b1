import { ModelSettingsError } from './model-settings-error.js';

/**
 * What the model costs, per million tokens, in the currency the operator names (an ISO 4217
 * code such as USD). Cached input tokens are priced at `cachedInputPerMillion` (default: the input
 * price); reasoning tokens are output tokens. A turn's cost is computed when it is written.
 */
export interface ModelPrices {
  currency: string;
  inputPerMillion: number;
  cachedInputPerMillion?: number;
  outputPerMillion: number;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `prices` of model settings or of one fallback target; `field` names it in errors. */
export function parsePrices(input: Record<string, unknown>, field = 'model.prices'): ModelPrices | undefined {
  const prices = input.prices;
  if (prices === undefined || prices === null) return undefined;
  if (!isObject(prices)) throw new ModelSettingsError(`${field} must be an object`);
  if (typeof prices.currency !== 'string' || !/^[A-Z]{3}$/.test(prices.currency)) {
    throw new ModelSettingsError(`${field}.currency must be a three-letter currency code such as USD`);
  }
  const price = (key: string, required: boolean): number | undefined => {
    const value = prices[key];
    if (value === undefined && !required) return undefined;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1_000_000) {
      throw new ModelSettingsError(`${field}.${key} must be a number between 0 and 1000000`);
    }
    return value;
  };
  const parsed: ModelPrices = {
    currency: prices.currency,
    inputPerMillion: price('inputPerMillion', true) as number,
    outputPerMillion: price('outputPerMillion', true) as number,
  };
  const cached = price('cachedInputPerMillion', false);
  if (cached !== undefined) parsed.cachedInputPerMillion = cached;
  return parsed;
}

/** The cost of one model call's usage at these prices. */
export function costOf(
  usage: { inputTokens: number; outputTokens: number; cachedTokens?: number },
  prices: ModelPrices,
): number {
  const cached = Math.min(usage.cachedTokens ?? 0, usage.inputTokens);
  return (
    ((usage.inputTokens - cached) * prices.inputPerMillion +
      cached * (prices.cachedInputPerMillion ?? prices.inputPerMillion) +
      usage.outputTokens * prices.outputPerMillion) /
    1_000_000
  );
}
