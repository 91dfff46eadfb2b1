import { Metrics, USAGE_LABEL_PAIRS_MAX } from './metrics.service.js';

/** The value of the one series of `name` with exactly these labels, from a scrape's text. */
function value(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name}{${labels}}`));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

describe('Metrics', () => {
  it('counts each label set on its own, observation after observation', async () => {
    const metrics = new Metrics();
    metrics.httpRequest('POST', '/v1/responses', 200, 0.02);
    metrics.httpRequest('POST', '/v1/responses', 200, 0.03);
    metrics.httpRequest('POST', '/v1/responses', 500, 0.01);
    metrics.httpRequest('GET', '/v1/responses/:id', 200, 0.001);
    metrics.upstreamCall('openai', 0.5, 'ok');
    metrics.upstreamCall('openai', 0.7, 'ok');
    metrics.upstreamCall('openai', 0.1, 'upstream_timeout');
    metrics.timeToFirstToken('openai', 0.2);
    const { body } = await metrics.render();
    const requests = 'switchboard_http_requests_total';
    expect(value(body, requests, 'method="POST",route="/v1/responses",status="200"')).toBe(2);
    expect(value(body, requests, 'method="POST",route="/v1/responses",status="500"')).toBe(1);
    expect(value(body, requests, 'method="GET",route="/v1/responses/:id",status="200"')).toBe(1);
    expect(
      value(
        body,
        'switchboard_http_request_duration_seconds_count',
        'method="POST",route="/v1/responses",status="200"',
      ),
    ).toBe(2);
    expect(
      value(body, 'switchboard_upstream_request_duration_seconds_count', 'provider="openai",outcome="ok"'),
    ).toBe(2);
    expect(
      value(
        body,
        'switchboard_upstream_request_duration_seconds_count',
        'provider="openai",outcome="upstream_timeout"',
      ),
    ).toBe(1);
    expect(
      value(body, 'switchboard_upstream_errors_total', 'provider="openai",code="upstream_timeout"'),
    ).toBe(1);
    expect(value(body, 'switchboard_time_to_first_token_seconds_count', 'provider="openai"')).toBe(1);
  });

  it('counts usage per pair up to its bound, and later pairs as "other"', async () => {
    const metrics = new Metrics();
    const usage = { inputTokens: 10, cachedTokens: 0, outputTokens: 3, reasoningTokens: 0 };
    for (let pair = 0; pair < USAGE_LABEL_PAIRS_MAX; pair++)
      metrics.usageTokens('org', `asst-${pair}`, usage);
    metrics.usageTokens('org', 'asst-0', usage);
    metrics.usageTokens('org', 'asst-late-1', usage);
    metrics.usageTokens('org', 'asst-late-2', usage);
    const { body } = await metrics.render();
    const tokens = 'switchboard_usage_tokens_total';
    expect(value(body, tokens, 'organization="org",assistant="asst-0",type="input"')).toBe(20);
    expect(value(body, tokens, 'organization="org",assistant="asst-0",type="output"')).toBe(6);
    // Types with no tokens are not counted.
    expect(value(body, tokens, 'organization="org",assistant="asst-0",type="cached"')).toBeUndefined();
    expect(value(body, tokens, 'organization="other",assistant="other",type="input"')).toBe(20);
    expect(body).not.toContain('asst-late');
  });
});
