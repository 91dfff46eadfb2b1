import type { ChatMessage, ModelRequest } from './llm.types.js';
import { allMessages, StoredMessages } from './stored-messages.js';

const THREAD: ChatMessage[] = [
  { role: 'user', content: 'say "hi" }, {"role": "user"} ü 😀\nline' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
  },
  { role: 'tool', tool_call_id: 'c1', content: '[]' },
];

describe('StoredMessages', () => {
  it('joins the elements of stored arrays, skipping empty ones, and parses them once', () => {
    const stored = StoredMessages.fromArrays([
      '[{"role": "user", "content": "a"}]',
      '[]',
      '[{"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}]',
    ]);
    expect(stored.json).toBe(
      '{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}',
    );
    expect(stored.messages()).toEqual([
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'b' },
      { role: 'user', content: 'c' },
    ]);
    expect(stored.messages()).toBe(stored.messages());
  });

  it('is NONE for no messages', () => {
    expect(StoredMessages.fromArrays([])).toBe(StoredMessages.NONE);
    expect(StoredMessages.fromArrays(['[]', '[]'])).toBe(StoredMessages.NONE);
    expect(StoredMessages.NONE.empty).toBe(true);
    expect(StoredMessages.NONE.messages()).toEqual([]);
    expect(StoredMessages.NONE.atMost).toBe(0);
  });

  it('round-trips messages given in memory', () => {
    expect(StoredMessages.of(THREAD).messages()).toEqual(THREAD);
  });

  it('bounds the count from above without parsing, for the shortest messages too', () => {
    const shortest = Array.from({ length: 50 }, () => '[{"role": ""}]');
    const stored = StoredMessages.fromArrays(shortest);
    expect(stored.messages()).toHaveLength(50);
    expect(stored.atMost).toBeGreaterThanOrEqual(50);
    const thread = StoredMessages.of(THREAD);
    expect(thread.atMost).toBeGreaterThanOrEqual(THREAD.length);
  });
});

describe('allMessages', () => {
  const base = {
    messages: [
      { role: 'system', content: 's' },
      { role: 'user', content: 'now' },
    ],
  } as ModelRequest;

  it('puts the stored history after the system messages', () => {
    const request = { ...base, history: { at: 1, stored: StoredMessages.of(THREAD) } } as ModelRequest;
    expect(allMessages(request)).toEqual([base.messages[0], ...THREAD, base.messages[1]]);
  });

  it('is the messages themselves without a stored history', () => {
    expect(allMessages(base)).toBe(base.messages);
  });
});
