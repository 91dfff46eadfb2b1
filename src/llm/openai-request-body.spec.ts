import type { ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import type { ChatMessage } from './llm.types.js';
import { requestBody } from './openai-compatible.provider.js';
import { StoredMessages } from './stored-messages.js';

const HISTORY: ChatMessage[] = [
  { role: 'user', content: 'say "hi" }, {"role": "user"} \\ ü 😀\nline' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
  },
  { role: 'tool', tool_call_id: 'c1', content: '[]' },
];
// As PostgreSQL's jsonb output writes a stored transcript: keys reordered, spaces after : and ,.
const STORED_TEXT = [
  '[{"role": "user", "content": "say \\"hi\\" }, {\\"role\\": \\"user\\"} \\\\ ü 😀\\nline"}]',
  '[{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\\"a\\":1}"}}]}, {"role": "tool", "content": "[]", "tool_call_id": "c1"}]',
];

function params(messages: ChatMessage[]): ChatCompletionCreateParamsStreaming {
  return {
    model: 'm "quoted"',
    messages,
    stream: true,
    stream_options: { include_usage: true },
    temperature: 0.5,
    tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
  };
}

describe('requestBody (a continued thread as stored text)', () => {
  const system: ChatMessage = { role: 'system', content: 'sys' };
  const now: ChatMessage = { role: 'user', content: 'now' };

  it('is the JSON value the SDK would send, keys in its order, the stored text kept as it is', () => {
    const stored = StoredMessages.fromArrays(STORED_TEXT);
    const body = requestBody(params([system, now]), { at: 1, stored }).toString('utf8');
    expect(body).toContain(stored.json);
    const expected = params([system, ...stored.messages(), now]);
    // Semantically identical: re-encoded, the two are byte for byte the same.
    expect(JSON.stringify(JSON.parse(body))).toBe(JSON.stringify(expected));
    expect(JSON.parse(body).messages.slice(1, -1)).toEqual(HISTORY);
  });

  it('places the history first or last, and writes an empty one as nothing', () => {
    const stored = StoredMessages.of(HISTORY);
    expect(JSON.parse(requestBody(params([now]), { at: 0, stored }).toString()).messages).toEqual([
      ...HISTORY,
      now,
    ]);
    expect(JSON.parse(requestBody(params([system]), { at: 1, stored }).toString()).messages).toEqual([
      system,
      ...HISTORY,
    ]);
    const none = requestBody(params([system, now]), { at: 1, stored: StoredMessages.NONE }).toString();
    expect(none).toBe(JSON.stringify(params([system, now])));
  });

  it("owns its memory: a small body is no slice of Node's shared buffer pool, held for the whole answer", () => {
    const body = requestBody(params([system, now]), {
      at: 1,
      stored: StoredMessages.fromArrays(STORED_TEXT),
    });
    expect(body.length).toBeLessThan(4096);
    expect(body.byteOffset).toBe(0);
    expect(body.buffer.byteLength).toBe(body.length);
  });
});
