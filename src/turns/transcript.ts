import type { ChatContentPart, ChatMessage, ChatToolCall } from '../llm/llm.types.js';
import type { InputItem, InputPart } from './input-item.types.js';

/** Converts a request's input items into the Chat Completions messages the model will see. */
export function inputToTranscript(items: InputItem[]): ChatMessage[] {
  const messages: ChatMessage[] = [];
  for (const item of items) {
    if (item.type === 'message') {
      if (item.role === 'user')
        messages.push({ role: 'user', content: item.parts ? item.parts.map(toChatPart) : item.text });
      else if (item.role === 'assistant') messages.push({ role: 'assistant', content: item.text });
      else messages.push({ role: 'system', content: item.text });
    } else if (item.type === 'function_call_output') {
      messages.push({ role: 'tool', tool_call_id: item.callId, content: item.output });
    } else if (item.type === 'compaction') {
      messages.push({ role: 'system', content: `Summary of the earlier conversation:\n${item.summary}` });
    } else if (item.type === 'reasoning') {
      // Chat Completions takes no reasoning back (some servers refuse it): it stays in the stored input.
      continue;
    } else {
      const call: ChatToolCall = {
        id: item.callId,
        type: 'function',
        function: { name: item.name, arguments: item.arguments },
      };
      const last = messages[messages.length - 1];
      // Consecutive calls from a client-managed history belong to one assistant message.
      if (last?.role === 'assistant' && last.tool_calls) last.tool_calls.push(call);
      else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
    }
  }
  return messages;
}

/**
 * A user content part as Chat Completions takes it. URLs were fetched and inlined when the turn
 * was prepared (input-attachments), so the thread keeps what the model saw.
 */
function toChatPart(part: InputPart): ChatContentPart {
  if (part.type === 'input_text') return { type: 'text', text: part.text };
  if (part.type === 'input_image')
    return { type: 'image_url', image_url: { url: part.imageUrl, detail: part.detail } };
  if (part.fileData === null)
    throw new Error('input_file reached the transcript before its file_url was fetched');
  return { type: 'file', file: { file_data: part.fileData, filename: part.filename ?? 'attachment' } };
}

/** The first user message, whitespace collapsed, cut at a word boundary to at most 80 characters. */
export function conversationTitle(text: string): string {
  const collapsed = text.replace(/\s+/g, ' ').trim();
  if (collapsed.length <= 80) return collapsed;
  const cut = collapsed.slice(0, 81);
  const boundary = cut.lastIndexOf(' ');
  return (boundary > 20 ? cut.slice(0, boundary) : collapsed.slice(0, 80)).trim();
}
