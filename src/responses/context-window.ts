import type { ChatMessage } from '../llm/llm.types.js';
import { estimateAllTokens, estimateTokens } from '../llm/token-estimate.js';

/**
 * `truncation: "auto"`: the thread without its oldest turns, so that instructions, user context,
 * what is left of the thread and this turn fit the context window with room for the reply. A turn
 * is left out whole (from one user message to the next), so no tool result loses its call.
 * Instructions, claims and memory and the newest turn always stay, even if they alone overflow.
 */
export function fitToContextWindow(
  system: readonly ChatMessage[],
  history: readonly ChatMessage[],
  current: readonly ChatMessage[],
  contextWindow: number,
  reserveForOutput = 0,
): readonly ChatMessage[] {
  const fixed = estimateAllTokens(system) + estimateAllTokens(current) + reserveForOutput;
  let size = estimateAllTokens(history);
  if (fixed + size <= contextWindow) return history;
  let start = 0;
  while (start < history.length && fixed + size > contextWindow) {
    // Leave out the oldest turn: its first message and everything up to the next user message.
    do {
      size -= estimateTokens(history[start]);
      start += 1;
    } while (start < history.length && history[start].role !== 'user');
  }
  return history.slice(start);
}
