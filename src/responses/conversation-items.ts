import type { ChatMessage } from '../llm/llm.types.js';
import { inputItemObject, type InputItemObject } from './input-item-view.js';
import { inputToTranscript } from '../turns/transcript.js';
import type { InputItem } from '../turns/input-item.types.js';
import type { OutputItem } from '../turns/output-item.types.js';
import { outputTextOf } from '../turns/output-text.js';

/**
 * A conversation's items are the turns of its current branch, oldest first: each turn's input
 * items, then its output items. Output items keep the ids the Response object showed; input items
 * the ids input_items shows (the client's, or one derived from the turn and the item's place),
 * written into the row once an item of that turn is deleted, so the others keep theirs.
 */
export type StoredInputItem = InputItem;

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

export type ConversationItem = InputItemObject;

export interface LocatedItem {
  turn: BranchTurn;
  item: ConversationItem;
}

/** Every item of the branch, oldest first. */
export function branchItems(turns: BranchTurn[]): LocatedItem[] {
  return turns.flatMap((turn) => [
    ...turn.input.map((item, index) => ({ turn, item: inputItemObject(item, index, turn.id) })),
    ...turn.output.map((item) => ({ turn, item })),
  ]);
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
  const input = turn.input.map((item, index) => ({ ...item, id: inputItemObject(item, index, turn.id).id }));
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
    outputText = outputTextOf(output);
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
