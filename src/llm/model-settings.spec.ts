import { costOf, ModelSettingsError, parseModelSettings } from './model-settings.js';

const upstream = { provider: 'openai-compatible', baseUrl: 'http://127.0.0.1:1/v1', model: 'm' };

function message(input: unknown): string {
  try {
    parseModelSettings(input);
  } catch (error) {
    if (error instanceof ModelSettingsError) return error.message;
    throw error;
  }
  return 'accepted';
}

describe('model prices', () => {
  it('accepts a price table on either provider and keeps it', () => {
    const prices = {
      currency: 'USD',
      inputPerMillion: 2.5,
      cachedInputPerMillion: 1.25,
      outputPerMillion: 10,
    };
    expect(parseModelSettings({ ...upstream, prices })).toMatchObject({ prices });
    expect(
      parseModelSettings({ provider: 'offline', prices: { ...prices, cachedInputPerMillion: undefined } }),
    ).toMatchObject({ prices: { currency: 'USD', inputPerMillion: 2.5, outputPerMillion: 10 } });
  });

  it('names the field that is wrong', () => {
    expect(message({ ...upstream, prices: 'cheap' })).toBe('model.prices must be an object');
    expect(
      message({ ...upstream, prices: { currency: 'usd', inputPerMillion: 1, outputPerMillion: 1 } }),
    ).toContain('model.prices.currency');
    expect(message({ ...upstream, prices: { currency: 'USD', outputPerMillion: 1 } })).toContain(
      'model.prices.inputPerMillion',
    );
    expect(
      message({ ...upstream, prices: { currency: 'USD', inputPerMillion: 1, outputPerMillion: -1 } }),
    ).toContain('model.prices.outputPerMillion');
  });

  it('prices cached input at its own rate, and reasoning as output', () => {
    const prices = {
      currency: 'USD',
      inputPerMillion: 100,
      cachedInputPerMillion: 50,
      outputPerMillion: 400,
    };
    expect(costOf({ inputTokens: 11, cachedTokens: 5, outputTokens: 5 }, prices)).toBeCloseTo(0.00285, 10);
    expect(
      costOf({ inputTokens: 10, outputTokens: 0 }, { ...prices, cachedInputPerMillion: undefined }),
    ).toBeCloseTo(0.001, 10);
  });
});

describe('offline script budget', () => {
  const script = (pattern: string, rules: number) =>
    Array.from({ length: rules }, () => ({ match: pattern, reply: 'ok' }));

  it('accepts rules whose patterns fit the shared budget', () => {
    const settings = parseModelSettings({ provider: 'offline', script: script('^(hi|hello)\\b', 8) });
    expect(settings.provider === 'offline' && settings.script?.length).toBe(8);
  });

  it('refuses a script whose patterns together compile past the budget, each one being within limits', () => {
    // One such pattern is accepted alone; thirty-two of them would test 32× as much per turn.
    expect(() => parseModelSettings({ provider: 'offline', script: script('(.*a){20}x', 1) })).not.toThrow();
    expect(() => parseModelSettings({ provider: 'offline', script: script('(.*a){20}x', 32) })).toThrow(
      /compile to \d+ steps together, above 256/,
    );
  });
});

describe('fallback targets', () => {
  it('accepts fallbacks, weights and a failover policy, and keeps them', () => {
    const parsed = parseModelSettings({
      ...upstream,
      weight: 2,
      fallbacks: [
        { baseUrl: 'https://b.example/v1/', model: 'b', apiKeyEnv: 'B_KEY', contextWindow: 128000 },
      ],
      failover: { retriesPerTarget: 1, budgetMs: 20000, on: ['upstream_rate_limited', 'upstream_timeout'] },
    });
    expect(parsed).toMatchObject({
      weight: 2,
      fallbacks: [{ baseUrl: 'https://b.example/v1', model: 'b', apiKeyEnv: 'B_KEY', contextWindow: 128000 }],
      failover: { retriesPerTarget: 1, budgetMs: 20000, on: ['upstream_rate_limited', 'upstream_timeout'] },
    });
  });

  it('names the field that is wrong', () => {
    expect(message({ ...upstream, fallbacks: {} })).toBe('model.fallbacks must be a list of targets');
    expect(message({ ...upstream, fallbacks: [{ model: 'b' }] })).toBe(
      'model.fallbacks[0].baseUrl is required',
    );
    expect(message({ ...upstream, fallbacks: [{ baseUrl: 'ftp://x', model: 'b' }] })).toBe(
      'model.fallbacks[0].baseUrl must be http or https',
    );
    expect(message({ ...upstream, fallbacks: [{ baseUrl: 'http://x', model: 'b', key: 'sk' }] })).toBe(
      'model.fallbacks[0].key is not a target field',
    );
    expect(message({ ...upstream, fallbacks: [{ baseUrl: 'http://x', model: 'b', apiKeyEnv: 'a b' }] })).toBe(
      'model.fallbacks[0].apiKeyEnv must be an environment variable name',
    );
    expect(message({ ...upstream, fallbacks: [{ baseUrl: 'http://x', model: 'b', prices: 1 }] })).toBe(
      'model.fallbacks[0].prices must be an object',
    );
    expect(message({ ...upstream, failover: { on: ['content_policy_violation'] } })).toMatch(
      /^model.failover.on must list some of .* \(a content-policy refusal never fails over\)$/,
    );
    expect(message({ ...upstream, failover: { retriesPerTarget: 11 } })).toBe(
      'model.failover.retriesPerTarget must be an integer between 0 and 10',
    );
    expect(message({ ...upstream, fallbacks: [{ baseUrl: 'http://x', model: 'b', prefill: 'yes' }] })).toBe(
      'model.fallbacks[0].prefill must be true or false',
    );
    expect(message({ ...upstream, failover: { continuation: 1 } })).toBe(
      'model.failover.continuation must be true or false',
    );
    expect(message({ ...upstream, failover: { balance: 'random' } })).toBe(
      'model.failover.balance must be "weighted" or "least-busy"',
    );
    expect(message({ ...upstream, failover: { reportModel: 'fallback' } })).toBe(
      'model.failover.reportModel must be "assistant" or "upstream"',
    );
  });

  it('keeps continuation, prefill-capable targets, least-busy balancing and the reported model', () => {
    const parsed = parseModelSettings({
      ...upstream,
      prefill: false,
      fallbacks: [{ baseUrl: 'https://b.example/v1', model: 'b', prefill: true }],
      failover: { continuation: true, balance: 'least-busy', reportModel: 'upstream' },
    });
    expect(parsed).toMatchObject({
      prefill: false,
      fallbacks: [{ model: 'b', prefill: true }],
      failover: { continuation: true, balance: 'least-busy', reportModel: 'upstream' },
    });
  });
});
