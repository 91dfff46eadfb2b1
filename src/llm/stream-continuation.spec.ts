import {
  UpstreamError,
  type LlmProvider,
  type ModelEvent,
  type ModelRequest,
  type UpstreamCallLog,
} from './llm.types.js';
import type { OpenAiCompatibleModelSettings } from './model-settings.js';
import { continueAnswer } from './stream-continuation.js';

const settings: OpenAiCompatibleModelSettings = {
  provider: 'openai-compatible',
  baseUrl: 'https://b.example/v1',
  model: 'b',
  functionCalling: true,
};

/** An upstream that streams `chunks`, recording the last message of each request. */
function upstream(chunks: string[]) {
  const last: unknown[] = [];
  const provider: LlmProvider = {
    async *stream(request: ModelRequest): AsyncIterable<ModelEvent[]> {
      last.push(request.messages[request.messages.length - 1]);
      await Promise.resolve();
      for (const delta of chunks) yield [{ type: 'text', delta }];
    },
  };
  return { provider, last };
}

async function run(provider: LlmProvider, sent: string, prefill: boolean) {
  const original = new UpstreamError('upstream_stream_interrupted', 'cut');
  const log: UpstreamCallLog = { attempts: [] };
  let text = '';
  let error: unknown;
  try {
    for await (const batch of continueAnswer({
      inner: provider,
      request: {
        settings,
        messages: [{ role: 'user', content: 'count' }],
        tools: [],
        options: {},
        signal: new AbortController().signal,
      },
      target: { index: 1, settings: { ...settings, prefill }, weight: 1, label: 'b@b.example' },
      sent,
      original,
      log,
      budgetMs: 1000,
      outcome: () => Promise.resolve(),
    }))
      for (const event of batch) if (event.type === 'text') text += event.delta;
  } catch (caught) {
    error = caught;
  }
  return { text, error, original, log };
}

describe('continueAnswer', () => {
  it('sends the text as a prefill without its trailing space, and drops the space if echoed', async () => {
    const { provider, last } = upstream([' three', ' four']);
    const result = await run(provider, 'one two ', true);
    expect(last).toEqual([{ role: 'assistant', content: 'one two' }]);
    expect('one two ' + result.text).toBe('one two three four');
    expect(result.log.answeredBy?.model).toBe('b');
  });

  it('replays: swallows the sent text however it is chunked, relays the rest', async () => {
    const { provider, last } = upstream(['one t', 'wo th', 'ree four']);
    const result = await run(provider, 'one two', false);
    expect(last).toEqual([{ role: 'user', content: 'count' }]);
    expect(result.text).toBe(' three four');
    expect(result.log.attempts).toEqual([
      expect.objectContaining({ outcome: 'completed', continuation: 'replay' }),
    ]);
  });

  it('a replay that differs, or ends before the sent text, ends with the original failure', async () => {
    const differs = await run(upstream(['one too many']).provider, 'one two', false);
    expect(differs.error).toBe(differs.original);
    expect(differs.text).toBe('');
    expect(differs.log.attempts[0].outcome).toBe('replay_diverged');
    const short = await run(upstream(['one']).provider, 'one two', false);
    expect(short.error).toBe(short.original);
  });
});
