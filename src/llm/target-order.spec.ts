import { deferCooling, targetOrder } from './target-order.js';
import { upstreamTargets } from './upstream-targets.js';
import { parseModelSettings, type OpenAiCompatibleModelSettings } from './model-settings.js';

const settings = parseModelSettings({
  provider: 'openai-compatible',
  baseUrl: 'https://a.example/v1',
  model: 'gpt',
  weight: 3,
  fallbacks: [
    { baseUrl: 'https://b.example/v1', model: 'gpt', weight: 1 },
    { baseUrl: 'https://c.example/v1', model: 'other' },
  ],
}) as OpenAiCompatibleModelSettings;

describe('target order', () => {
  it('draws the members of a pool by weight and keeps the pools in declared order', () => {
    const targets = upstreamTargets(settings);
    expect(targets.map((target) => target.label)).toEqual([
      'gpt@a.example',
      'gpt@b.example',
      'other@c.example',
    ]);
    // 0.7 of a total weight of 4 falls in the first member (weight 3), 0.8 in the second.
    expect(targetOrder(targets, () => 0.7).map((target) => target.index)).toEqual([0, 1, 2]);
    expect(targetOrder(targets, () => 0.8).map((target) => target.index)).toEqual([1, 0, 2]);
    const firsts = new Map<number, number>();
    let seed = 0;
    const random = () => (seed = (seed * 9301 + 49297) % 233280) / 233280;
    for (let i = 0; i < 4000; i++) {
      const first = targetOrder(targets, random)[0].index;
      firsts.set(first, (firsts.get(first) ?? 0) + 1);
    }
    expect((firsts.get(0) ?? 0) / 4000).toBeCloseTo(0.75, 1);
    expect(firsts.get(2)).toBeUndefined();
  });

  it('least-busy: a pool goes in order of the calls its members run, the weighted draw breaking ties', () => {
    const targets = upstreamTargets(settings);
    const running = new Map([[0, 2]]);
    const busy = (target: { index: number }) => running.get(target.index) ?? 0;
    expect(targetOrder(targets, () => 0.7, busy).map((target) => target.index)).toEqual([1, 0, 2]);
    running.set(1, 5);
    expect(targetOrder(targets, () => 0.8, busy).map((target) => target.index)).toEqual([0, 1, 2]);
    running.clear();
    expect(targetOrder(targets, () => 0.8, busy).map((target) => target.index)).toEqual([1, 0, 2]);
  });

  it('moves cooling targets to the back without dropping them', () => {
    expect(deferCooling([1, 2, 3], (n) => n === 1)).toEqual([2, 3, 1]);
    expect(deferCooling([1, 2], () => true)).toEqual([1, 2]);
  });

  it('gives each fallback its own key name, window and prices, the rest from the settings', () => {
    const [, second, third] = upstreamTargets({
      ...settings,
      temperature: 0.5,
      contextWindow: 1000,
      fallbacks: [
        { baseUrl: 'https://b.example/v1', model: 'gpt', apiKeyEnv: 'B_KEY', contextWindow: 9000 },
        { baseUrl: 'https://c.example/v1', model: 'other' },
      ],
    });
    expect(second.settings).toMatchObject({ apiKeyEnv: 'B_KEY', contextWindow: 9000, temperature: 0.5 });
    expect(third.settings.contextWindow).toBeUndefined();
    expect(third.settings).not.toHaveProperty('fallbacks');
  });
});
