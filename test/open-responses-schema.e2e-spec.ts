import { parseSse } from './support/sse.js';
import {
  eventProblems,
  expectValidItem,
  expectValidResponse,
  expectValidStreamEvents,
  responseProblems,
} from './support/open-responses.js';

/**
 * The shared Open Responses assertion itself: it accepts what the specification describes and
 * rejects, by path, what it does not (so the tests that use it can fail).
 */
const COMPLETE = {
  id: 'resp_1',
  object: 'response',
  created_at: 1_700_000_000,
  completed_at: 1_700_000_001,
  status: 'completed',
  incomplete_details: null,
  model: 'asst_1',
  previous_response_id: null,
  instructions: null,
  output: [
    {
      type: 'message',
      id: 'msg_1',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'Hi', annotations: [] }],
    },
    { type: 'handover', id: 'hov_1', specialist: 'billing' },
  ],
  error: null,
  tools: [],
  tool_choice: 'auto',
  truncation: 'disabled',
  parallel_tool_calls: true,
  text: { format: { type: 'text' } },
  top_p: 1,
  presence_penalty: 0,
  frequency_penalty: 0,
  top_logprobs: 0,
  temperature: 1,
  reasoning: null,
  usage: {
    input_tokens: 3,
    output_tokens: 1,
    total_tokens: 4,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens_details: { reasoning_tokens: 0 },
  },
  max_output_tokens: null,
  max_tool_calls: null,
  store: true,
  background: false,
  service_tier: 'default',
  metadata: {},
  safety_identifier: null,
  prompt_cache_key: null,
};

describe('the Open Responses schema assertion', () => {
  it('accepts a complete Response, with the contract’s own items set aside', () => {
    expect(() => expectValidResponse(COMPLETE)).not.toThrow();
  });

  it('names each missing or mistyped field', () => {
    const { completed_at: _completed, ...missing } = COMPLETE;
    expect(responseProblems(missing)).toContain("/ must have required property 'completed_at'");
    expect(responseProblems({ ...COMPLETE, truncation: 'sometimes' }).join('\n')).toMatch(/\/truncation/);
    expect(() => expectValidResponse({ ...COMPLETE, usage: { input_tokens: 1 } })).toThrow(/\/usage/);
  });

  it('checks items by their type', () => {
    expect(() => expectValidItem(COMPLETE.output[0])).not.toThrow();
    expect(() => expectValidItem({ type: 'function_call', id: 'fc_1', name: 'f' })).toThrow(/call_id/);
  });

  it('checks each event of a stream, its SSE name and its sequence numbers', () => {
    const raw = [
      {
        type: 'response.created',
        sequence_number: 0,
        response: { ...COMPLETE, status: 'in_progress', output: [] },
      },
      { type: 'response.status', sequence_number: 1, code: 'tool_calling', message: '', metadata: {} },
      {
        type: 'response.output_text.delta',
        sequence_number: 2,
        item_id: 'msg_1',
        output_index: 0,
        content_index: 0,
        delta: 'Hi',
        logprobs: [],
      },
      { type: 'response.completed', sequence_number: 3, response: COMPLETE },
    ]
      .map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`)
      .join('');
    const { events } = parseSse(`${raw}data: [DONE]\n\n`);
    expect(() => expectValidStreamEvents(events)).not.toThrow();

    const gap = events.filter((_, index) => index !== 1);
    expect(() => expectValidStreamEvents(gap)).toThrow(/sequence_number 2, expected 1/);
    const renamed = [{ ...events[0], event: 'response.started' }];
    expect(() => expectValidStreamEvents(renamed)).toThrow(/SSE name response.started/);
    expect(eventProblems({ type: 'response.output_text.delta', sequence_number: 0 }).join('\n')).toMatch(
      /item_id/,
    );
    expect(eventProblems({ type: 'response.unknown', sequence_number: 0 })).toEqual([
      'event type response.unknown is not in the specification',
    ]);
  });
});
