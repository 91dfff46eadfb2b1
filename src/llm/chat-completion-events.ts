import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { ModelEvent, TokenLogprob } from './llm.types.js';
import type { WellFormedDeltas } from './well-formed-text.js';

/** Servers that stream reasoning put it beside `content`: `reasoning_content` (vLLM, DeepSeek) or `reasoning` (Ollama, OpenRouter). */
type ReasoningDelta = { reasoning_content?: string | null; reasoning?: string | null };

/**
 * Appends the events one Chat Completions chunk carries to `events`, their text made well-formed
 * by `text` (one per model call, OpenAiCompatibleProvider).
 */
export function translate(chunk: ChatCompletionChunk, text: WellFormedDeltas, events: ModelEvent[]): void {
  const choice = chunk.choices?.[0];
  const delta = choice?.delta as (NonNullable<typeof choice>['delta'] & ReasoningDelta) | undefined;
  const reasoning = delta?.reasoning_content || delta?.reasoning;
  if (reasoning) relay(text, { type: 'reasoning', delta: reasoning }, events);
  if (delta?.content) {
    const logprobs = choice?.logprobs?.content;
    relay(
      text,
      logprobs
        ? { type: 'text', delta: delta.content, logprobs: logprobs.map(toLogprob) }
        : { type: 'text', delta: delta.content },
      events,
    );
  }
  for (const call of delta?.tool_calls ?? []) {
    const event: ModelEvent = {
      type: 'tool_call',
      index: call.index,
      id: call.id ?? undefined,
      name: call.function?.name ?? undefined,
      argumentsDelta: call.function?.arguments ?? undefined,
    };
    relay(text, event, events);
  }
  // The answer is over: a surrogate still waiting for its other half never gets it.
  if (choice?.finish_reason) events.push(...text.flush());
  if (choice?.finish_reason === 'length') events.push({ type: 'stopped_short', reason: 'max_output_tokens' });
  // Azure OpenAI's (and OpenAI's) content filter ends the answer as the model's own decision:
  // incomplete, like S13's refusal never retried nor failed over.
  else if (choice?.finish_reason === 'content_filter')
    events.push({ type: 'stopped_short', reason: 'content_filter' });
  if (chunk.usage) {
    events.push({
      type: 'usage',
      usage: {
        inputTokens: chunk.usage.prompt_tokens,
        outputTokens: chunk.usage.completion_tokens,
        cachedTokens: chunk.usage.prompt_tokens_details?.cached_tokens ?? undefined,
        reasoningTokens: chunk.usage.completion_tokens_details?.reasoning_tokens ?? undefined,
      },
    });
  }
}

/** Appends the event as `text` lets it be relayed (well-formed; nothing while a half is held). */
function relay(text: WellFormedDeltas, event: ModelEvent, events: ModelEvent[]): void {
  const relayed = text.take(event);
  if (relayed) events.push(relayed);
}

function toLogprob(entry: {
  token: string;
  logprob: number;
  bytes: number[] | null;
  top_logprobs: { token: string; logprob: number; bytes: number[] | null }[];
}): TokenLogprob {
  return {
    token: entry.token,
    logprob: entry.logprob,
    bytes: entry.bytes ?? [],
    top_logprobs: entry.top_logprobs.map((top) => ({
      token: top.token,
      logprob: top.logprob,
      bytes: top.bytes ?? [],
    })),
  };
}
