import { randomUUID } from 'node:crypto';
import type { ApiError } from '../common/errors/error-catalogue.js';
import type { ResponseObject } from './response-view.js';
import type { TurnRecord } from './store/turn-store.repository.js';
import type { ResponseRecorder } from './streaming/response-recorder.js';
import { conversationTitle, inputToTranscript, userTextOf } from './transcript.js';
import type { PreparedTurn } from './turn-preparer.js';
import type { TurnProgress } from './turn-runner.js';

/** Token usage in the Response object's shape, with the upstream's cached and reasoning tokens. */
export function usageOf(progress: TurnProgress): NonNullable<ResponseObject['usage']> {
  const usage = progress.usage;
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: usage.cachedTokens },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens },
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}

/** The turn's usage by currency for the rollup; the first row counts the turn. */
function usageRows(progress: TurnProgress): TurnRecord['usageRows'] {
  // A turn the upstream reported nothing for still counts as a turn.
  const spend = progress.spend.size > 0 ? progress.spend : new Map([['', { ...progress.usage, cost: 0 }]]);
  return [...spend].map(([currency, spent], index) => ({
    currency,
    turns: index === 0 ? 1 : 0,
    inputTokens: spent.inputTokens,
    cachedTokens: spent.cachedTokens,
    outputTokens: spent.outputTokens,
    reasoningTokens: spent.reasoningTokens,
    cost: spent.cost,
  }));
}

/**
 * Everything a finished (or failed) turn stores: the response, its conversation and the
 * chat-history messages. A failed turn keeps the user's input in the thread, not the partial reply.
 */
export function turnRecord(
  turn: PreparedTurn,
  recorder: ResponseRecorder,
  progress: TurnProgress,
  failure: ApiError | null,
  completedAt: Date,
): Omit<TurnRecord, 'body'> {
  const userTexts = userTextOf(turn.request.input);
  const outputText = recorder.outputText;
  const messages: TurnRecord['messages'] = userTexts.map((content, position) => ({
    id: randomUUID(),
    role: 'user',
    content,
    position,
    createdAt: turn.createdAt,
  }));
  // An incomplete reply (cut by max_output_tokens) is still the assistant's reply.
  if (!failure && outputText.trim()) {
    messages.push({
      id: randomUUID(),
      role: 'assistant',
      content: outputText,
      position: messages.length,
      createdAt: completedAt,
    });
  }
  return {
    responseId: turn.responseId,
    organizationId: turn.principal.organizationId,
    assistantId: turn.assistant.id,
    conversationId: turn.conversationId,
    newConversationTitle: turn.previous ? null : conversationTitle(userTexts[0] ?? ''),
    previousResponseId: turn.previous?.responseId ?? null,
    userId: turn.user.userId,
    status: failure ? 'failed' : progress.status,
    depth: (turn.previous?.depth ?? 0) + 1,
    activeAgent: progress.activeAgent,
    instructions: turn.request.instructions,
    input: turn.request.input,
    output: recorder.output,
    outputText,
    transcript: failure ? inputToTranscript(turn.modelInput) : progress.transcript,
    usage: usageOf(progress),
    apiKeyId: turn.principal.keyId,
    usageRows: usageRows(progress),
    error: failure?.toBody().error ?? null,
    createdAt: turn.createdAt,
    completedAt,
    messages,
  };
}
