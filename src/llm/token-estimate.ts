import type { ChatMessage } from './llm.types.js';

/**
 * A provider-neutral estimate of a prompt's size in tokens (about four characters a token, plus
 * a few per message for the chat template). Used to fit a thread into an assistant's context
 * window before the upstream is called; it errs on the large side.
 */
export function estimateTokens(message: ChatMessage): number {
  let chars = typeof message.content === 'string' ? message.content.length : 0;
  if (message.role === 'assistant') {
    for (const call of message.tool_calls ?? [])
      chars += call.function.name.length + call.function.arguments.length;
  }
  return Math.ceil(chars / 4) + 4;
}

export function estimateAllTokens(messages: readonly ChatMessage[]): number {
  let total = 0;
  for (const message of messages) total += estimateTokens(message);
  return total;
}
