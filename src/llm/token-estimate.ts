import type { ChatMessage } from './llm.types.js';

/**
 * A provider-neutral estimate of a prompt's size in tokens (about four characters a token, plus
 * a few per message for the chat template). Used to fit a thread into an assistant's context
 * window before the upstream is called; it errs on the large side.
 */
/** An image or file part counts as this many tokens (about what a low-detail image costs). */
const ATTACHMENT_TOKENS = 512;

export function estimateTokens(message: ChatMessage): number {
  let chars = 0;
  let attachments = 0;
  if (typeof message.content === 'string') chars = message.content.length;
  else if (Array.isArray(message.content)) {
    for (const part of message.content) {
      if (part.type === 'text') chars += part.text.length;
      else attachments += 1;
    }
  }
  if (message.role === 'assistant') {
    for (const call of message.tool_calls ?? [])
      chars += call.function.name.length + call.function.arguments.length;
  }
  return Math.ceil(chars / 4) + 4 + attachments * ATTACHMENT_TOKENS;
}

export function estimateAllTokens(messages: readonly ChatMessage[]): number {
  let total = 0;
  for (const message of messages) total += estimateTokens(message);
  return total;
}
