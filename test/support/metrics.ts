import { call } from './http.js';

/** The text a scrape of `/metrics` answers (tests start the service with no METRICS_TOKEN). */
export async function scrapeMetrics(baseUrl: string): Promise<string> {
  return (await call(baseUrl, 'GET', '/metrics')).body as string;
}

/**
 * The values of `switchboard_usage_tokens_total` of one organization and token type (`input`,
 * `cached`, `output`, `reasoning`), and of one assistant if given: one per series, in scrape order.
 */
export function usageTokenCounts(
  metrics: string,
  filter: { organization: string; type: string; assistant?: string },
): number[] {
  return metrics
    .split('\n')
    .filter(
      (line) =>
        line.startsWith('switchboard_usage_tokens_total{') &&
        line.includes(`organization="${filter.organization}"`) &&
        (filter.assistant === undefined || line.includes(`assistant="${filter.assistant}"`)) &&
        line.includes(`type="${filter.type}"`),
    )
    .map((line) => Number(line.split(' ').at(-1)));
}
