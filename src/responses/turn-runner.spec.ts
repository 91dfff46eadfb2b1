import type { ModelSettings } from '../llm/model-settings.js';
import type { LlmProvidersService } from '../llm/llm-providers.service.js';
import { TurnAbortedError, type ModelEvent, type ModelRequest } from '../llm/llm.types.js';
import type { Metrics } from '../metrics/metrics.service.js';
import type { AgentProfile } from '../specialists/agent-roster.service.js';
import type { ServerTool, ToolExecutionContext } from '../tools/server-tool.js';
import { ResponseRecorder, type EventSink } from './streaming/response-recorder.js';
import { ModelCallStreamer } from './model-call-streamer.js';
import { TurnRunner } from './turn-runner.js';
import { TurnProgress, type TurnPlan } from '../turns/turn-plan.js';
import { StoredMessages, allMessages } from '../llm/stored-messages.js';

/** A provider that answers each model call with the next scripted list of batches. */
class FakeProvider {
  readonly requests: ModelRequest[] = [];
  constructor(private readonly script: ModelEvent[][][]) {}

  // eslint-disable-next-line @typescript-eslint/require-await
  async *stream(request: ModelRequest): AsyncIterable<ModelEvent[]> {
    this.requests.push({ ...request, messages: [...allMessages(request)], tools: [...request.tools] });
    const answer = this.script[this.requests.length - 1];
    if (!answer) throw new Error(`no scripted answer for model call ${this.requests.length}`);
    for (const batch of answer) yield batch;
  }
}

const metrics = {
  timeToFirstToken: () => undefined,
  upstreamCall: () => undefined,
  tokensRelayed: () => undefined,
} as unknown as Metrics;

const model: ModelSettings = { provider: 'offline', functionCalling: true };

function agent(name: string | null, instructions: string, toolNames: string[] = []): AgentProfile {
  return {
    name,
    role: `the ${name ?? 'generic'} agent`,
    instructions,
    model,
    modelConfiguredBy: 'platform',
    toolNames,
  };
}

const text = (delta: string): ModelEvent => ({ type: 'text', delta });
const call = (index: number, id: string, name: string, args: string): ModelEvent => ({
  type: 'tool_call',
  index,
  id,
  name,
  argumentsDelta: args,
});
const usage = (inputTokens: number, outputTokens: number): ModelEvent => ({
  type: 'usage',
  usage: { inputTokens, outputTokens },
});

function echoTool(name: string, seen: Record<string, unknown>[] = []): ServerTool {
  return {
    kind: 'rest',
    definition: { name, description: `the ${name} tool`, parameters: { type: 'object' } },
    execute: (args) => {
      seen.push(args);
      return Promise.resolve({ ok: true, output: `${name} says ${JSON.stringify(args)}` });
    },
  };
}

function setUp(
  script: ModelEvent[][][],
  overrides: Partial<TurnPlan> = {},
  sink?: EventSink,
): { runner: TurnRunner; provider: FakeProvider; plan: TurnPlan; recorder: ResponseRecorder } {
  const provider = new FakeProvider(script);
  const providers = { for: () => provider } as unknown as LlmProvidersService;
  const toolContext: ToolExecutionContext = {
    organizationId: 'org',
    signal: new AbortController().signal,
  };
  const plan: TurnPlan = {
    roster: { generic: agent(null, 'You are helpful.'), specialists: new Map() },
    startAgent: null,
    toolsFor: () => Promise.resolve([]),
    modelAccess: () => Promise.resolve(undefined),
    requestInstructions: null,
    userContext: null,
    history: StoredMessages.NONE,
    newMessages: [{ role: 'user', content: 'Hello' }],
    clientTools: [],
    toolContext,
    maxIterations: 4,
    maxHandovers: 2,
    modelOptions: {},
    toolChoice: { mode: 'auto', name: null, allowed: null, hosted: null, echo: 'auto' },
    maxOutputTokens: null,
    maxToolCalls: null,
    truncation: 'disabled',
    webSearchSources: false,
    ...overrides,
  };
  return {
    runner: new TurnRunner(new ModelCallStreamer(providers, metrics)),
    provider,
    plan,
    recorder: new ResponseRecorder(sink, { status: false, reasoning: 'response.reasoning' }),
  };
}

async function run(setup: ReturnType<typeof setUp>): Promise<TurnProgress> {
  const progress = new TurnProgress(setup.plan);
  await setup.runner.run(setup.plan, setup.recorder, progress);
  return progress;
}

describe('TurnRunner', () => {
  it('relays a text answer and records it, its usage and the transcript', async () => {
    const setup = setUp([[[text('Hi '), text('there')], [usage(12, 3)]]], {
      requestInstructions: 'Be brief.',
      userContext: '<user_context>likes tea</user_context>',
      history: StoredMessages.of([
        { role: 'user', content: 'Earlier' },
        { role: 'assistant', content: 'Before' },
      ]),
    });
    const progress = await run(setup);

    expect(setup.recorder.outputText).toBe('Hi there');
    expect(setup.recorder.output).toEqual([
      expect.objectContaining({ type: 'message', role: 'assistant', status: 'completed' }),
    ]);
    expect(progress.status).toBe('completed');
    expect(progress.usage).toEqual({ inputTokens: 12, outputTokens: 3, cachedTokens: 0, reasoningTokens: 0 });
    expect(progress.transcript).toEqual([
      { role: 'user', content: 'Hello' },
      { role: 'assistant', content: 'Hi there' },
    ]);
    // System messages (agent, request, user context), then the thread, then this turn's input.
    expect(setup.provider.requests).toHaveLength(1);
    expect(setup.provider.requests[0].messages).toEqual([
      { role: 'system', content: 'You are helpful.' },
      { role: 'system', content: 'Be brief.' },
      { role: 'system', content: '<user_context>likes tea</user_context>' },
      { role: 'user', content: 'Earlier' },
      { role: 'assistant', content: 'Before' },
      { role: 'user', content: 'Hello' },
    ]);
  });

  it('stops at a client function call with requires_action and the call in the output', async () => {
    const weather = { name: 'get_weather', parameters: { type: 'object' } };
    const setup = setUp([[[call(0, 'call_1', 'get_weather', '{"city":'), call(0, '', '', '"Oslo"}')]]], {
      clientTools: [weather],
    });
    const progress = await run(setup);

    expect(progress.status).toBe('requires_action');
    expect(setup.recorder.output).toEqual([
      expect.objectContaining({
        type: 'function_call',
        call_id: 'call_1',
        name: 'get_weather',
        arguments: '{"city":"Oslo"}',
      }),
    ]);
    expect(setup.provider.requests[0].tools).toEqual([weather]);
    expect(progress.transcript.at(-1)).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
      ],
    });
  });

  it('runs a server tool and calls the model again with its result', async () => {
    const seen: Record<string, unknown>[] = [];
    const lookup = echoTool('lookup', seen);
    const setup = setUp([[[call(0, 'call_s', 'lookup', '{"q":"x"}')]], [[text('Found it')]]], {
      toolsFor: () => Promise.resolve([lookup]),
    });
    const progress = await run(setup);

    expect(seen).toEqual([{ q: 'x' }]);
    expect(setup.recorder.outputText).toBe('Found it');
    expect(progress.status).toBe('completed');
    expect(setup.provider.requests).toHaveLength(2);
    // The second call sees the first call's tool request and the tool's answer, last.
    expect(setup.provider.requests[1].messages.slice(-2)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_s', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_s', content: 'lookup says {"q":"x"}' },
    ]);
    expect(progress.transcript).toContainEqual({
      role: 'tool',
      tool_call_id: 'call_s',
      content: 'lookup says {"q":"x"}',
    });
  });

  it('tells the model about unknown tools and unparseable arguments instead of failing', async () => {
    const lookup = echoTool('lookup');
    const setup = setUp(
      [[[call(0, 'call_a', 'nope', '{}'), call(1, 'call_b', 'lookup', 'not json')]], [[text('ok')]]],
      { toolsFor: () => Promise.resolve([lookup]) },
    );
    const progress = await run(setup);

    expect(progress.transcript).toContainEqual({
      role: 'tool',
      tool_call_id: 'call_a',
      content: JSON.stringify({ error: 'Unknown tool "nope"' }),
    });
    expect(progress.transcript).toContainEqual({
      role: 'tool',
      tool_call_id: 'call_b',
      content: JSON.stringify({ error: 'The tool arguments were not a JSON object' }),
    });
  });

  it('offers no server tools on the last iteration, so the model has to answer', async () => {
    const lookup = echoTool('lookup');
    const setup = setUp([[[call(0, 'call_1', 'lookup', '{}')]], [[text('done')]]], {
      toolsFor: () => Promise.resolve([lookup]),
      maxIterations: 2,
    });
    await run(setup);

    expect(setup.provider.requests.map((request) => request.tools.map((tool) => tool.name))).toEqual([
      ['lookup'],
      [],
    ]);
  });

  it('hands over to a specialist, which continues with its own instructions and tools', async () => {
    const billingTools = [echoTool('invoices')];
    const asked: (string | null)[] = [];
    const billing = agent('billing', 'You handle invoices.', ['invoices']);
    const setup = setUp(
      [
        [[call(0, 'call_h', 'transfer_to_billing', '{"reason":"an invoice question"}')]],
        [[text('Billing here')]],
      ],
      {
        roster: { generic: agent(null, 'You are helpful.'), specialists: new Map([['billing', billing]]) },
        toolsFor: (profile) => {
          asked.push(profile.name);
          return Promise.resolve(profile.name === 'billing' ? billingTools : []);
        },
      },
    );
    const progress = await run(setup);

    expect(asked).toEqual([null, 'billing']);
    expect(progress.activeAgent).toBe('billing');
    expect(setup.recorder.output[0]).toEqual(
      expect.objectContaining({
        type: 'handover',
        from_specialist: 'generic',
        to_specialist: 'billing',
        reason: 'an invoice question',
      }),
    );
    expect(setup.provider.requests[0].tools.map((tool) => tool.name)).toEqual(['transfer_to_billing']);
    expect(setup.provider.requests[1].messages[0]).toEqual({
      role: 'system',
      content: 'You handle invoices.',
    });
    expect(setup.provider.requests[1].tools.map((tool) => tool.name)).toEqual([
      'invoices',
      'transfer_to_generic',
    ]);
  });

  it('starts with the specialist that answered last on the branch', async () => {
    const billing = agent('billing', 'You handle invoices.');
    const setup = setUp([[[text('Still billing')]]], {
      roster: { generic: agent(null, 'You are helpful.'), specialists: new Map([['billing', billing]]) },
      startAgent: 'billing',
    });
    const progress = await run(setup);

    expect(progress.activeAgent).toBe('billing');
    expect(setup.provider.requests[0].messages[0]).toEqual({
      role: 'system',
      content: 'You handle invoices.',
    });
  });

  it('ends with TurnAbortedError when the turn is aborted during the model call', async () => {
    const controller = new AbortController();
    const setup = setUp([[[text('partial')], [text(' never relayed')]]], {
      toolContext: { organizationId: 'org', signal: controller.signal },
    });
    // The client leaves once the first batch is out; the provider, like a real one, stops
    // reading when the call's signal fires.
    const scripted = setup.provider.stream.bind(setup.provider);
    const seen: { abortedAtCall: boolean; batches: number } = { abortedAtCall: true, batches: 0 };
    setup.provider.stream = async function* (request: ModelRequest) {
      seen.abortedAtCall = request.signal?.aborted ?? true;
      for await (const batch of scripted(request)) {
        if (request.signal?.aborted) return;
        seen.batches += 1;
        yield batch;
        controller.abort();
      }
    };
    const progress = new TurnProgress(setup.plan);

    await expect(setup.runner.run(setup.plan, setup.recorder, progress)).rejects.toBeInstanceOf(
      TurnAbortedError,
    );
    // The call was under way (made before the abort, one batch relayed) when the turn was aborted.
    expect(seen).toEqual({ abortedAtCall: false, batches: 1 });
    // What was relayed before the abort stays recorded, to be stored with the failed response.
    expect(setup.recorder.outputText).toBe('partial');
  });
});
