import type { ChatMessage } from '../llm/llm.types.js';
import type { InputItem } from './dto/create-response.dto.js';
import type { OutputItem } from './streaming/response-recorder.js';
import { inputToTranscript } from './transcript.js';

/**
 * A conversation's items are the turns of its current branch, oldest first: each turn's input
 * items, then its output items. Output items keep the ids the Response object showed. Input items
 * of a model turn were stored without ids: theirs is derived from the turn and the item's place
 * (`<prefix>_<32 hex of the turn><4 hex of the index>`, never the 32 hex of a generated id), and
 * written into the row once an item of that turn is deleted, so the others keep their ids.
 */
export type StoredInputItem = InputItem & { id?: string };

/** One row of the branch, as the conversation store reads it. */
export interface BranchTurn {
  id: string;
  /** Null on a row of items added through the Conversations API. */
  assistantId: string | null;
  input: StoredInputItem[];
  output: OutputItem[];
  transcript: ChatMessage[];
  outputText: string;
}

export type ConversationItem = Record<string, unknown> & { id: string; type: string };

export interface LocatedItem {
  turn: BranchTurn;
  item: ConversationItem;
}

const PREFIX: Record<InputItem['type'], string> = {
  message: 'msg',
  function_call: 'fc',
  function_call_output: 'fco',
};

export function inputItemId(turnId: string, item: StoredInputItem, index: number): string {
  return (
    item.id ?? `${PREFIX[item.type]}_${turnId.replaceAll('-', '')}${index.toString(16).padStart(4, '0')}`
  );
}

/** An input item in the OpenAI conversation-item shape. */
export function inputItemView(id: string, item: InputItem): ConversationItem {
  if (item.type === 'message') {
    const part =
      item.role === 'assistant'
        ? { type: 'output_text', text: item.text, annotations: [] }
        : { type: 'input_text', text: item.text };
    return { type: 'message', id, status: 'completed', role: item.role, content: [part] };
  }
  if (item.type === 'function_call') {
    return {
      type: 'function_call',
      id,
      call_id: item.callId,
      name: item.name,
      arguments: item.arguments,
      status: 'completed',
    };
  }
  return { type: 'function_call_output', id, call_id: item.callId, output: item.output, status: 'completed' };
}

/** Every item of the branch, oldest first. */
export function branchItems(turns: BranchTurn[]): LocatedItem[] {
  return turns.flatMap((turn) => [
    ...turn.input.map((item, index) => ({
      turn,
      item: inputItemView(inputItemId(turn.id, item, index), item),
    })),
    ...turn.output.map((item) => ({ turn, item })),
  ]);
}

/** Items added through the API get their ids when stored. */
export function withIds(items: InputItem[], newId: (prefix: string) => string): StoredInputItem[] {
  return items.map((item) => ({ ...item, id: newId(PREFIX[item.type]) }));
}

/** The chat-history messages of items added through the API: user and assistant text, in order. */
export function itemMessages(
  items: InputItem[],
): { role: 'user' | 'assistant'; content: string; position: number }[] {
  return items
    .flatMap((item) =>
      item.type === 'message' && (item.role === 'user' || item.role === 'assistant') && item.text.trim()
        ? [{ role: item.role, content: item.text }]
        : [],
    )
    .map((message, position) => ({ ...message, position }));
}

/** What a turn's row becomes without one of its items, and which chat-history message goes. */
export interface TurnWithoutItem {
  input: StoredInputItem[];
  output: OutputItem[];
  transcript: ChatMessage[];
  outputText: string;
  /**
   * The turn's chat-history message that showed the item: deleted, or rewritten to `replacement`
   * (the reply's remaining text). Found by role and text: a turn stores each message once.
   */
  message: { role: 'user' | 'assistant'; content: string; replacement: string | null } | null;
}

/**
 * Removes one item from a turn, and from what the model sees of it (the transcript): the input
 * part of a transcript is exactly `inputToTranscript(input)`; the rest is the model's own output.
 */
export function removeItem(turn: BranchTurn, itemId: string): TurnWithoutItem | null {
  const input = turn.input.map((item, index) => ({ ...item, id: inputItemId(turn.id, item, index) }));
  const inputIndex = input.findIndex((item) => item.id === itemId);
  const generated = turn.transcript.slice(inputToTranscript(turn.input).length);
  if (inputIndex >= 0) {
    const removed = input[inputIndex];
    const remaining = input.filter((_, index) => index !== inputIndex);
    return {
      input: remaining,
      output: turn.output,
      transcript: [...inputToTranscript(remaining), ...generated],
      outputText: turn.outputText,
      message: chatMessageOf(turn, removed),
    };
  }
  const outputIndex = turn.output.findIndex((item) => item.id === itemId);
  if (outputIndex < 0) return null;
  const removed = turn.output[outputIndex];
  const output = turn.output.filter((_, index) => index !== outputIndex);
  let transcript = generated;
  let message: TurnWithoutItem['message'] = null;
  let outputText = turn.outputText;
  if (removed.type === 'message') {
    const text = removed.content.map((part) => part.text).join('');
    const at = transcript.findLastIndex((entry) => entry.role === 'assistant' && entry.content === text);
    if (at >= 0) transcript = transcript.filter((_, index) => index !== at);
    outputText = output
      .flatMap((item) => (item.type === 'message' ? item.content.map((p) => p.text) : []))
      .join('');
    message = {
      role: 'assistant',
      content: turn.outputText,
      replacement: outputText.trim() ? outputText : null,
    };
  } else if (removed.type === 'function_call') {
    transcript = withoutCall(transcript, removed.call_id);
  }
  return {
    input,
    output,
    transcript: [...inputToTranscript(turn.input), ...transcript],
    outputText,
    message,
  };
}

/** The chat-history message of an input item: user text for a model turn, user and assistant text for added items. */
function chatMessageOf(turn: BranchTurn, item: StoredInputItem): TurnWithoutItem['message'] {
  if (item.type !== 'message' || !item.text.trim()) return null;
  const shown = item.role === 'user' || (turn.assistantId === null && item.role === 'assistant');
  return shown ? { role: item.role as 'user' | 'assistant', content: item.text, replacement: null } : null;
}

function withoutCall(transcript: ChatMessage[], callId: string): ChatMessage[] {
  return transcript.flatMap((entry): ChatMessage[] => {
    if (entry.role === 'tool') return entry.tool_call_id === callId ? [] : [entry];
    if (entry.role !== 'assistant' || !entry.tool_calls) return [entry];
    const calls = entry.tool_calls.filter((call) => call.id !== callId);
    if (calls.length === entry.tool_calls.length) return [entry];
    if (calls.length === 0 && !entry.content) return [];
    return [{ ...entry, tool_calls: calls.length > 0 ? calls : undefined }];
  });
}
