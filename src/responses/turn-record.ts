import { randomUUID } from 'node:crypto';
import type { ApiError } from '../common/errors/error-catalogue.js';
import { responseObject, type ResponseObject } from './response-view.js';
import { ResponseRecorder } from './streaming/response-recorder.js';
import { conversationTitle } from '../turns/transcript.js';
import type { InputItem } from '../turns/input-item.types.js';
import type { PreparedTurn } from './turn-preparer.js';
import type { TurnStart, TurnRecord } from '../turns/turn.types.js';
import type { TurnProgress } from '../turns/turn-plan.js';

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

/** The turn's usage by model and currency for the rollups; the first row counts the turn. */
function usageRows(progress: TurnProgress): TurnRecord['usageRows'] {
  // A turn the upstream reported nothing for still counts as a turn (model not known: '').
  const spend =
    progress.spend.size > 0
      ? [...progress.spend.values()]
      : [{ ...progress.usage, model: '', currency: '', cost: 0 }];
  return spend.map((spent, index) => ({
    model: spent.model,
    currency: spent.currency,
    turns: index === 0 ? 1 : 0,
    inputTokens: spent.inputTokens,
    cachedTokens: spent.cachedTokens,
    outputTokens: spent.outputTokens,
    reasoningTokens: spent.reasoningTokens,
    cost: spent.cost,
  }));
}

/**
 * The Response object of a turn being run, just finished, or (without progress) only queued.
 * A `store: false` turn names no conversation unless it continues a stored one.
 */
export function turnResponse(
  turn: PreparedTurn,
  recorder: ResponseRecorder,
  progress: TurnProgress | null,
  status: ResponseObject['status'],
  error: ResponseObject['error'],
  completedAt: Date | null,
): ResponseObject {
  const kept = turn.request.options.store || turn.previous !== null;
  const running = status === 'queued' || status === 'in_progress';
  return responseObject({
    id: turn.responseId,
    assistantId: turn.assistant.id,
    model: reportedModel(turn, progress),
    conversationId: kept ? turn.conversationId : null,
    previousResponseId: turn.previous?.responseId ?? null,
    createdAt: turn.createdAt,
    completedAt,
    status,
    incompleteReason: status === 'incomplete' ? (progress?.incompleteReason ?? null) : null,
    instructions: turn.request.instructions,
    output: recorder.output,
    outputText: recorder.outputText,
    usage: running || !progress ? null : usageOf(progress),
    error,
    params: turn.params,
  });
}

/**
 * The Response's `model` when the assistant reports the upstream model (`model.failover.reportModel:
 * upstream`): the one whose output the turn received last, or, before any answered, its own
 * model. Undefined: the assistant (`asst_<uuid>`, decisions.md). The row keeps the assistant id.
 */
function reportedModel(turn: PreparedTurn, progress: TurnProgress | null): string | undefined {
  const settings = turn.assistant.model;
  if (settings.provider !== 'openai-compatible' || settings.failover?.reportModel !== 'upstream')
    return undefined;
  return progress?.answeringModel ?? settings.model;
}

/**
 * The row a turn writes when it starts (one statement): the response, owned by this replica under
 * a lease, and the user's messages, so a replica lost mid-turn leaves both behind.
 */
export function turnStart(
  turn: PreparedTurn,
  status: TurnStart['status'],
  lease: { ownerId: string; leaseMs: number },
): TurnStart {
  const userTexts = userTextOf(turn.request.input);
  return {
    ...turnKeys(turn, userTexts),
    status,
    activeAgent: turn.previous?.activeAgent ?? null,
    transcript: turn.inputTranscript,
    background: turn.params.background,
    body: JSON.stringify(turnResponse(turn, new ResponseRecorder(undefined), null, status, null, null)),
    ownerId: lease.ownerId,
    leaseMs: lease.leaseMs,
    messages: userMessages(turn, userTexts),
  };
}

/** What a turn's start and end rows say alike. */
function turnKeys(turn: PreparedTurn, userTexts: string[]) {
  return {
    responseId: turn.responseId,
    organizationId: turn.principal.organizationId,
    assistantId: turn.assistant.id,
    conversationId: turn.conversationId,
    newConversationTitle: turn.previous ? null : conversationTitle(userTexts[0] ?? ''),
    previousResponseId: turn.previous?.responseId ?? null,
    userId: turn.user.userId,
    depth: (turn.previous?.depth ?? 0) + 1,
    instructions: turn.request.instructions,
    input: turn.request.input,
    createdAt: turn.createdAt,
  };
}

/** Text of the user's messages in this turn, for chat history and the conversation title. */
function userTextOf(items: InputItem[]): string[] {
  return items.flatMap((item) =>
    item.type === 'message' && item.role === 'user' && item.text.trim() ? [item.text] : [],
  );
}

function userMessages(turn: PreparedTurn, userTexts: string[]): TurnRecord['messages'] {
  return userTexts.map((content, position) => ({
    id: randomUUID(),
    role: 'user',
    content,
    position,
    createdAt: turn.createdAt,
  }));
}

/** The final write of a turn whose start was recorded: its user messages are already stored. */
export function completionRecord(record: TurnRecord): TurnRecord {
  return { ...record, messages: record.messages.filter((message) => message.role === 'assistant') };
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
  const messages = userMessages(turn, userTexts);
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
    ...turnKeys(turn, userTexts),
    newConversation: turn.previous === null && turn.request.conversationId === null,
    status: failure ? 'failed' : progress.status,
    activeAgent: progress.activeAgent,
    output: recorder.output,
    outputText,
    transcript: failure ? turn.inputTranscript : progress.transcript,
    usage: usageOf(progress),
    apiKeyId: turn.principal.keyId,
    usageRows: usageRows(progress),
    upstreamAttempts: progress.upstreamAttempts,
    error: failure?.toBody().error ?? null,
    completedAt,
    messages,
  };
}
