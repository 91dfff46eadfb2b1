import type { ChatMessage } from '../llm/llm.types.js';
import { estimateAllTokens } from '../llm/token-estimate.js';
import { fitToContextWindow } from './context-window.js';

const text = (n: number) => 'x'.repeat(n * 4);

describe('fitToContextWindow', () => {
  const system: ChatMessage[] = [{ role: 'system', content: text(10) }];
  const history: ChatMessage[] = [
    { role: 'user', content: text(20) },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
    },
    { role: 'tool', tool_call_id: 'c1', content: text(20) },
    { role: 'assistant', content: text(20) },
    { role: 'user', content: text(20) },
    { role: 'assistant', content: text(20) },
  ];
  const current: ChatMessage[] = [{ role: 'user', content: text(10) }];

  it('keeps the whole thread when it fits', () => {
    expect(fitToContextWindow(system, history, current, 10_000)).toBe(history);
  });

  it('leaves out whole turns from the oldest, never splitting a tool call from its result', () => {
    const fitted = fitToContextWindow(system, history, current, 90);
    expect(fitted).toEqual(history.slice(4));
    expect(estimateAllTokens([...system, ...fitted, ...current])).toBeLessThanOrEqual(90);
  });

  it('reserves room for the reply, and leaves the thread out entirely when nothing else fits', () => {
    expect(fitToContextWindow(system, history, current, 90, 40)).toEqual([]);
    expect(fitToContextWindow(system, history, current, 5)).toEqual([]);
  });
});
