import { randomUUID } from 'node:crypto';
import type { ApiError } from '../common/errors/error-catalogue.js';
import type { ChatMessage } from '../llm/llm.types.js';
import { conversationTitle } from '../turns/transcript.js';
import type { TurnRecorded } from '../turns/turn-events.js';
import type { TurnProgress } from '../turns/turn-plan.js';
import type { TurnRecord, TurnRow, TurnStart } from '../turns/turn.types.js';
import { responseObject, type ResponseObject, type ResponseSource } from './response-view.js';
import type { ResponseRecorder } from './streaming/response-recorder.js';
import type { PreparedTurn } from './turn-preparer.js';
import { usageOf, usageRows } from './turn-usage.js';

/** What a Response object shows of the turn's output: the recorder's, or none yet. */
type OutputSoFar = Pick<ResponseRecorder, 'output' | 'outputText'>;

/** What a turn's start and end rows say alike (the status, agent and messages differ). */
type TurnKeys = Omit<TurnRow, 'status' | 'activeAgent' | 'messages'>;

/** What every Response object of the turn says alike (queued, running, finished or failed). */
type ResponseKeys = Omit<
  ResponseSource,
  'model' | 'completedAt' | 'status' | 'incompleteReason' | 'output' | 'outputText' | 'usage' | 'error'
>;

/**
 * What a turn's rows and Response objects take from the prepared turn, read from it once when the
 * turn is started: the start row, each Response object (queued, running, final) and the final
 * record are then built from the run's own state (the recorder's output, the progress) alone.
 */
export class TurnRecording {
  readonly responseId: string;
  /** `store: true`: the turn has rows to write (a start row, a final write). */
  readonly stored: boolean;
  readonly background: boolean;
  private readonly row: TurnKeys;
  private readonly view: ResponseKeys;
  /** Text of the user's messages in this turn, for chat history and the conversation title. */
  private readonly userTexts: string[];
  /** The model `model` names when the assistant reports the upstream one; null: the assistant. */
  private readonly reportedModel: string | null;
  /** The agent that answered last on this branch: the thread's until the turn's end says otherwise. */
  private readonly previousAgent: string | null;
  /** The input as the model sees it: the start row's thread, and a failed turn's. */
  private readonly inputTranscript: ChatMessage[];
  private readonly newConversation: boolean;
  private readonly continued: TurnStart['continued'];
  private readonly apiKeyId: string;
  /** The start row's body (the announced Response) and its JSON text, made once, until `running` takes it. */
  private startBody: { response: ResponseObject; json: string } | undefined;

  constructor(turn: PreparedTurn) {
    const { request, previous, assistant } = turn;
    this.responseId = turn.responseId;
    this.continued =
      request.conversationId !== null
        ? { kind: 'conversation', id: request.conversationId }
        : request.previousResponseId !== null
          ? { kind: 'response', id: request.previousResponseId }
          : undefined;
    this.stored = request.options.store;
    this.background = turn.params.background;
    this.userTexts = request.input.flatMap((item) =>
      item.type === 'message' && item.role === 'user' && item.text.trim() ? [item.text] : [],
    );
    this.row = {
      responseId: turn.responseId,
      organizationId: turn.principal.organizationId,
      assistantId: assistant.id,
      conversationId: turn.conversationId,
      newConversationTitle: previous ? null : conversationTitle(this.userTexts[0] ?? ''),
      previousResponseId: previous?.responseId ?? null,
      userId: turn.user.userId,
      depth: (previous?.depth ?? 0) + 1,
      instructions: request.instructions,
      input: request.input,
      createdAt: turn.createdAt,
    };
    // A `store: false` turn names no conversation unless it continues a stored one.
    const kept = request.options.store || previous !== null;
    this.view = {
      id: turn.responseId,
      assistantId: assistant.id,
      conversationId: kept ? turn.conversationId : null,
      previousResponseId: previous?.responseId ?? null,
      createdAt: turn.createdAt,
      instructions: request.instructions,
      params: turn.params,
    };
    // `model.failover.reportModel: upstream`; otherwise the assistant (`asst_<uuid>`, decisions.md).
    const settings = assistant.model;
    this.reportedModel =
      settings.provider === 'openai-compatible' && settings.failover?.reportModel === 'upstream'
        ? settings.model
        : null;
    this.previousAgent = previous?.activeAgent ?? null;
    this.inputTranscript = turn.inputTranscript;
    this.newConversation = previous === null && request.conversationId === null;
    this.apiKeyId = turn.principal.keyId;
  }

  /**
   * The Response object of the turn queued, running (no progress yet, or some) or just finished.
   * With the upstream reported, `model` is the one whose output the turn received last, or, before
   * any answered, the assistant's own model. The row keeps the assistant id.
   */
  response(
    output: OutputSoFar,
    progress: TurnProgress | null,
    status: ResponseObject['status'],
    error: ResponseObject['error'],
    completedAt: Date | null,
  ): ResponseObject {
    const running = status === 'queued' || status === 'in_progress';
    return responseObject({
      ...this.view,
      model: this.reportedModel === null ? undefined : (progress?.answeringModel ?? this.reportedModel),
      completedAt,
      status,
      incompleteReason: status === 'incomplete' ? (progress?.incompleteReason ?? null) : null,
      output: output.output,
      outputText: output.outputText,
      usage: running || !progress ? null : usageOf(progress),
      error,
    });
  }

  /**
   * A running turn's Response (`response`'s) and its JSON text: the start row's body text while the
   * two are the same Response (no output yet, same status and model), so `response.created` and
   * `response.in_progress` cost no serialization of their own; otherwise made once on first use.
   */
  running(output: OutputSoFar, progress: TurnProgress, status: 'in_progress') {
    const response = this.response(output, progress, status, null, null);
    const start = this.startBody;
    // Announced once per turn: let go of the start's body, which a stream would hold to its end.
    this.startBody = undefined;
    const same =
      start?.response.status === status &&
      start.response.model === response.model &&
      output.output.length === 0;
    let json = same ? start.json : undefined;
    return { response, json: () => (json ??= JSON.stringify(response)) };
  }

  /** The Response object a turn's start row holds, and a background turn is answered with. */
  announced(status: TurnStart['status']): ResponseObject {
    return this.response({ output: [], outputText: '' }, null, status, null, null);
  }

  /**
   * The row a turn writes when it starts (one statement): the response, owned by this replica under
   * a lease, and the user's messages, so a replica lost mid-turn leaves both behind.
   */
  start(status: TurnStart['status'], lease: { ownerId: string; leaseMs: number }): TurnStart {
    const announced = this.announced(status);
    this.startBody = { response: announced, json: JSON.stringify(announced) };
    return {
      ...this.row,
      status,
      activeAgent: this.previousAgent,
      transcript: this.inputTranscript,
      background: this.background,
      newConversation: this.newConversation,
      continued: this.continued,
      body: this.startBody.json,
      ownerId: lease.ownerId,
      leaseMs: lease.leaseMs,
      messages: this.userMessages(),
    };
  }

  /**
   * Everything a finished (or failed) turn stores: the response, its conversation and the
   * chat-history messages. A failed turn keeps the user's input in the thread, not the partial reply.
   */
  record(
    output: OutputSoFar,
    progress: TurnProgress,
    failure: ApiError | null,
    completedAt: Date,
  ): Omit<TurnRecord, 'body'> {
    const outputText = output.outputText;
    const messages = this.userMessages();
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
      ...this.row,
      newConversation: this.newConversation,
      status: failure ? 'failed' : progress.status,
      activeAgent: progress.activeAgent,
      output: output.output,
      outputText,
      transcript: failure ? this.inputTranscript : progress.transcript,
      usage: usageOf(progress),
      apiKeyId: this.apiKeyId,
      usageRows: usageRows(progress),
      upstreamAttempts: progress.upstreamAttempts,
      error: failure?.toBody().error ?? null,
      completedAt,
      messages,
    };
  }

  /** The "turn recorded" event of its stored usage (a final write, an ended or a refused turn's). */
  recorded(
    record: Pick<TurnRecord, 'organizationId' | 'assistantId' | 'status'>,
    progress: TurnProgress,
  ): TurnRecorded {
    const { organizationId, assistantId, status } = record;
    const usage = { ...progress.usage };
    return {
      responseId: this.responseId,
      organizationId,
      assistantId,
      status,
      background: this.background,
      usage,
    };
  }

  private userMessages(): TurnRecord['messages'] {
    return this.userTexts.map((content, position) => ({
      id: randomUUID(),
      role: 'user',
      content,
      position,
      createdAt: this.row.createdAt,
    }));
  }
}

/** The final write of a turn whose start was recorded: its user messages are already stored. */
export function completionRecord(record: TurnRecord): TurnRecord {
  return { ...record, messages: record.messages.filter((message) => message.role === 'assistant') };
}
