import { branchItems, removeItem, type BranchTurn } from './conversation-items.js';
import { inputItemObject } from './input-item-view.js';
import type { OutputItem } from '../turns/output-item.types.js';

const TURN_ID = '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0';

/** A model turn: the user asked, the model called a client function, then answered. */
function modelTurn(): BranchTurn {
  const output: OutputItem[] = [
    {
      type: 'function_call',
      id: 'fc_1',
      call_id: 'call_1',
      name: 'lookup',
      arguments: '{}',
      status: 'completed',
    },
    {
      type: 'message',
      id: 'msg_out',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'Done.', annotations: [] }],
    },
  ] as unknown as OutputItem[];
  return {
    id: TURN_ID,
    assistantId: 'a',
    input: [
      { type: 'message', role: 'developer', text: 'Be brief.' },
      { type: 'message', role: 'user', text: 'Look it up' },
    ],
    output,
    outputText: 'Done.',
    transcript: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Look it up' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'found' },
      { role: 'assistant', content: 'Done.' },
    ],
  };
}

describe('conversation items', () => {
  it('derives stable ids for a model turn’s input items, from the turn and the place', () => {
    const items = branchItems([modelTurn()]).map((located) => located.item.id);
    expect(items).toEqual([
      'msg_0f1e2d3c4b5a69788796a5b4c3d2e1f0_0',
      'msg_0f1e2d3c4b5a69788796a5b4c3d2e1f0_1',
      'fc_1',
      'msg_out',
    ]);
  });

  it('removes an input item from the transcript and keeps the other items’ ids', () => {
    const turn = modelTurn();
    const id = inputItemObject(turn.input[0], 0, turn.id).id;
    const second = inputItemObject(turn.input[1], 1, turn.id).id;
    const rewritten = removeItem(turn, id)!;
    expect(rewritten.input).toEqual([{ type: 'message', role: 'user', text: 'Look it up', id: second }]);
    expect(rewritten.transcript).toEqual(turn.transcript.slice(1));
    // A developer message is in no chat history.
    expect(rewritten.message).toBeNull();
    expect(removeItem({ ...turn, input: rewritten.input }, second)!.message).toEqual({
      role: 'user',
      content: 'Look it up',
      replacement: null,
    });
  });

  it('removes a function call with its result, and the reply with its chat-history message', () => {
    const turn = modelTurn();
    const withoutCall = removeItem(turn, 'fc_1')!;
    expect(withoutCall.transcript).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Look it up' },
      { role: 'assistant', content: 'Done.' },
    ]);
    expect(withoutCall.output.map((item) => item.id)).toEqual(['msg_out']);
    const withoutReply = removeItem(turn, 'msg_out')!;
    expect(withoutReply.transcript).toEqual(turn.transcript.slice(0, 4));
    expect(withoutReply.outputText).toBe('');
    expect(withoutReply.message).toEqual({ role: 'assistant', content: 'Done.', replacement: null });
  });

  it('finds nothing for an id the turn does not hold', () => {
    expect(removeItem(modelTurn(), 'msg_other')).toBeNull();
  });
});
