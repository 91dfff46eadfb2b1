import type { AppConfig } from '../config/app-config.js';
import { FailoverProvider } from './failover.provider.js';
import {
  ContextLengthError,
  UpstreamError,
  type LlmProvider,
  type ModelEvent,
  type ModelRequest,
  type UpstreamCallLog,
} from './llm.types.js';
import type { OpenAiCompatibleModelSettings } from './model-settings.js';
import { UpstreamBreakers } from './upstream-breakers.js';
import { UpstreamLoad } from './upstream-load.js';
import { UpstreamRedis } from './upstream-redis.js';

type Behaviour = Error | 'answer' | 'cut-after-output';

/** An inner provider scripted per model name; it records the calls it got. */
function scripted(behaviours: Record<string, Behaviour[]>) {
  const calls: { model: string; apiKey?: string; retries?: number }[] = [];
  const provider: LlmProvider = {
    async *stream(request: ModelRequest): AsyncIterable<ModelEvent[]> {
      const settings = request.settings as OpenAiCompatibleModelSettings;
      calls.push({
        model: settings.model,
        apiKey: request.access?.apiKey,
        retries: request.retry?.maxRetries,
      });
      const behaviour = behaviours[settings.model]?.shift() ?? 'answer';
      if (behaviour instanceof Error) throw behaviour;
      await Promise.resolve();
      yield [{ type: 'text', delta: `from ${settings.model}` }];
      if (behaviour === 'cut-after-output') throw new UpstreamError('upstream_stream_interrupted', 'cut');
      yield [{ type: 'usage', usage: { inputTokens: 1, outputTokens: 2 } }];
    },
  };
  return { provider, calls };
}

function breakers(failures = 2): UpstreamBreakers {
  const config = {
    upstream: { breakerFailures: failures, breakerCooldownMs: 60_000 },
    limits: {},
  } as unknown as AppConfig;
  return new UpstreamBreakers(config, new UpstreamRedis(config));
}

/** Running-call counts of this process alone (no REDIS_URL). */
const load = () => new UpstreamLoad(new UpstreamRedis({ limits: {} } as unknown as AppConfig));

/** The load of least-busy calls, counting those started and not yet ended. */
class CountedLoad extends UpstreamLoad {
  unended = 0;

  constructor() {
    super(new UpstreamRedis({ limits: {} } as unknown as AppConfig));
  }

  override started(key: string): () => void {
    this.unended += 1;
    const ended = super.started(key);
    return () => {
      this.unended -= 1;
      ended();
    };
  }
}

const settings: OpenAiCompatibleModelSettings = {
  provider: 'openai-compatible',
  baseUrl: 'https://a.example/v1',
  model: 'a',
  apiKeyEnv: 'A_KEY',
  contextWindow: 1000,
  functionCalling: true,
  fallbacks: [
    { baseUrl: 'https://b.example/v1', model: 'b', apiKeyEnv: 'B_KEY', contextWindow: 500 },
    { baseUrl: 'https://c.example/v1', model: 'c', contextWindow: 100_000 },
  ],
};

async function run(provider: FailoverProvider, overrides: Partial<OpenAiCompatibleModelSettings> = {}) {
  const log: UpstreamCallLog = { attempts: [] };
  const events: ModelEvent[] = [];
  let error: unknown;
  try {
    for await (const batch of provider.stream({
      settings: { ...settings, ...overrides },
      access,
      messages: [],
      tools: [],
      options: {},
      signal: new AbortController().signal,
      log,
    }))
      events.push(...batch);
  } catch (caught) {
    error = caught;
  }
  const outcomes = log.attempts.map((attempt) => `${attempt.model}:${attempt.outcome}`);
  return { events, error, outcomes, log };
}

const access = {
  apiKey: 'ka',
  apiKeys: { A_KEY: 'ka', B_KEY: 'kb' },
  poolKey: 'p',
  traceContext: false,
  scope: 'org',
};

function request(): ModelRequest {
  return {
    settings,
    access,
    messages: [],
    tools: [],
    options: {},
    signal: new AbortController().signal,
  };
}

const options = { maxRetries: 2, retryBudgetMs: 1000, failoverBudgetMs: 10_000 };
const rateLimited = () => new UpstreamError('upstream_rate_limited', 'slow down', 1, 429);

describe('FailoverProvider', () => {
  it('moves to the next target before the first output, with its own key, retrying only the last', async () => {
    const { provider, calls } = scripted({ a: [rateLimited()] });
    const result = await run(new FailoverProvider(provider, breakers(), options, load()));
    expect(result.events[0]).toEqual({ type: 'text', delta: 'from b' });
    expect(result.outcomes).toEqual(['a:upstream_rate_limited', 'b:completed']);
    expect(result.log.answeredBy).toMatchObject({ model: 'b', index: 1 });
    expect(calls).toEqual([
      { model: 'a', apiKey: 'ka', retries: 0 },
      { model: 'b', apiKey: 'kb', retries: 0 },
    ]);
  });

  it('never fails over once output started', async () => {
    const { provider, calls } = scripted({ a: ['cut-after-output'] });
    const result = await run(new FailoverProvider(provider, breakers(), options, load()));
    expect((result.error as UpstreamError).code).toBe('upstream_stream_interrupted');
    expect(calls).toHaveLength(1);
    expect(result.log.attempts[0]).toMatchObject({ answered: true, outcome: 'upstream_stream_interrupted' });
  });

  it('sends a prompt too long for a target only to targets with a larger declared window', async () => {
    const { provider, calls } = scripted({ a: [new ContextLengthError()] });
    const result = await run(new FailoverProvider(provider, breakers(), options, load()));
    expect(calls.map((call) => call.model)).toEqual(['a', 'c']);
    expect(result.outcomes).toEqual(['a:context_length_exceeded', 'c:completed']);
    const none = scripted({ a: [new ContextLengthError()] });
    const refused = await run(new FailoverProvider(none.provider, breakers(), options, load()), {
      fallbacks: [{ baseUrl: 'https://b.example/v1', model: 'b', contextWindow: 500 }],
    });
    expect(refused.error).toBeInstanceOf(ContextLengthError);
  });

  it('ends at once on a content-policy refusal, and on codes the policy does not fail over', async () => {
    const refusal = new UpstreamError('content_policy_violation', 'refused', undefined, 400);
    const { provider, calls } = scripted({ a: [refusal] });
    expect((await run(new FailoverProvider(provider, breakers(), options, load()))).error).toBe(refusal);
    expect(calls).toHaveLength(1);
    const narrow = scripted({ a: [rateLimited()] });
    const result = await run(new FailoverProvider(narrow.provider, breakers(), options, load()), {
      failover: { on: ['upstream_timeout'] },
    });
    expect((result.error as UpstreamError).code).toBe('upstream_rate_limited');
  });

  it('least-busy: a second call goes to the member of the pool that is not busy', async () => {
    let release = () => {};
    let held = Promise.resolve();
    const hosts: string[] = [];
    const provider: LlmProvider = {
      async *stream(request: ModelRequest): AsyncIterable<ModelEvent[]> {
        const host = new URL((request.settings as OpenAiCompatibleModelSettings).baseUrl).host;
        hosts.push(host);
        yield [{ type: 'text', delta: host }];
        if (hosts.length === 1) await held;
      },
    };
    const failover = new FailoverProvider(provider, breakers(), options, load());
    const pool = {
      fallbacks: [{ baseUrl: 'https://b.example/v1', model: 'a' }],
      failover: { balance: 'least-busy' as const },
    };
    for (let round = 0; round < 5; round++) {
      hosts.length = 0;
      held = new Promise<void>((resolve) => (release = resolve));
      const first = failover
        .stream({ ...request(), settings: { ...settings, ...pool } })
        [Symbol.asyncIterator]();
      await first.next();
      await run(failover, pool);
      expect(new Set(hosts).size).toBe(2);
      release();
      await first.next();
    }
  });

  it('fails over from a provider that throws at once, and ends its running count', async () => {
    const answering = scripted({});
    let throws = 1;
    const provider: LlmProvider = {
      stream(request: ModelRequest): AsyncIterable<ModelEvent[]> {
        if (throws-- > 0) throw rateLimited();
        return answering.provider.stream(request);
      },
    };
    const pool = {
      fallbacks: [{ baseUrl: 'https://b.example/v1', model: 'a' }],
      failover: { balance: 'least-busy' as const },
    };
    const tracked = new CountedLoad();
    const result = await run(new FailoverProvider(provider, breakers(), options, tracked), pool);
    expect(result.error).toBeUndefined();
    expect(result.outcomes).toEqual(['a:upstream_rate_limited', 'a:completed']);
    expect(result.events[0]).toEqual({ type: 'text', delta: 'from a' });
    expect(tracked.unended).toBe(0);
    throws = 2;
    const failed = await run(new FailoverProvider(provider, breakers(), options, tracked), pool);
    expect((failed.error as UpstreamError).code).toBe('upstream_rate_limited');
    expect(failed.outcomes).toEqual(['a:upstream_rate_limited', 'a:upstream_rate_limited']);
    expect(tracked.unended).toBe(0);
  });

  it('puts a target whose breaker opened at the back, and still tries it when all else fails', async () => {
    const shared = breakers(2);
    const { provider, calls } = scripted({ a: [rateLimited(), rateLimited()] });
    const failover = new FailoverProvider(provider, shared, options, load());
    await run(failover);
    await run(failover);
    calls.length = 0;
    const skipped = await run(failover);
    expect(skipped.outcomes).toEqual(['b:completed']);
    expect(skipped.log.cooling).toEqual(['a@a.example:open']);
    const lastResort = scripted({ b: [rateLimited()], c: [rateLimited()] });
    const result = await run(new FailoverProvider(lastResort.provider, shared, options, load()));
    expect(result.outcomes).toEqual(['b:upstream_rate_limited', 'c:upstream_rate_limited', 'a:completed']);
  });
});
