import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { ApiKeyPrincipal } from '../api-keys/api-keys.service.js';
import { AssistantsService } from '../assistants/assistants.service.js';
import type { AssistantEntity } from '../assistants/entities/assistant.entity.js';
import { logUnexpected, unexpectedFailure } from '../common/errors/all-exceptions.filter.js';
import { ApiError } from '../common/errors/error-catalogue.js';
import { currentRequestContext } from '../common/logging/request-context.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { TurnAbortedError, UpstreamError } from '../llm/llm.types.js';
import { parseResponseId, type CreateResponseDto, type UserHeaders } from './dto/create-response.dto.js';
import {
  ResponsesRepository,
  type StoredResponse,
  type ThreadHead,
  type TurnRecord,
} from './responses.repository.js';
import { ResponseRecorder, type EventSink, type OutputItem } from './streaming/response-recorder.js';
import { conversationTitle, inputToTranscript, userTextOf } from './transcript.js';
import { TurnProgress, TurnRunner, type TurnPlan } from './turn-runner.js';
import { SaveToMemoryTool } from '../memory/save-to-memory.tool.js';
import { renderUserContext } from '../memory/user-context.prompt.js';
import { UserContextService, type TurnUserContext } from '../memory/user-context.service.js';
import { AgentRosterService, type AgentRoster } from '../specialists/agent-roster.service.js';
import { ToolCatalogService } from '../tools/tool-catalog.service.js';
import { LifecycleState, shutdownError } from '../lifecycle/lifecycle.state.js';
import { Metrics } from '../metrics/metrics.service.js';

/** The Response object of spec 2.1, as both the JSON body and `response.completed` carry it. */
export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: 'in_progress' | 'completed' | 'requires_action' | 'failed';
  model: string;
  output: OutputItem[];
  output_text: string;
  previous_response_id: string | null;
  instructions: string | null;
  conversation: { id: string };
  usage: { input_tokens: number; output_tokens: number; total_tokens: number } | null;
  error: { type: string; code: string; message: string } | null;
  incomplete_details: null;
  metadata: Record<string, string>;
  parallel_tool_calls: boolean;
  tool_choice: 'auto';
  tools: unknown[];
}

/** A turn validated against the database and ready to run. */
interface PreparedTurn {
  responseId: string;
  createdAt: Date;
  principal: ApiKeyPrincipal;
  assistant: AssistantEntity;
  request: CreateResponseDto;
  user: UserHeaders;
  previous: ThreadHead | null;
  conversationId: string;
  roster: AgentRoster;
  userContext: TurnUserContext | null;
}

export interface StreamTarget extends EventSink {
  open(): void;
  done(): void;
  close(): void;
}

@Injectable()
export class ResponsesService {
  private readonly logger = new Logger('Responses');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly assistants: AssistantsService,
    private readonly repository: ResponsesRepository,
    private readonly runner: TurnRunner,
    private readonly rosters: AgentRosterService,
    private readonly userContexts: UserContextService,
    private readonly toolCatalog: ToolCatalogService,
    private readonly saveToMemory: SaveToMemoryTool,
    private readonly metrics: Metrics,
    private readonly lifecycle: LifecycleState,
  ) {}

  /**
   * Everything that can fail before any byte is sent: assistant, previous response, call ids.
   * Errors here are plain HTTP errors even for `stream: true`.
   */
  async prepare(
    principal: ApiKeyPrincipal,
    request: CreateResponseDto,
    user: UserHeaders,
  ): Promise<PreparedTurn> {
    const assistant = await this.assistants.findForTurn(principal.organizationId, request.assistantId);
    if (!assistant) throw new ApiError('assistant_not_found', `No assistant asst_${request.assistantId}`);
    const log = currentRequestContext();
    if (log) log.assistantId = assistant.id;
    if (request.tools.length > 0 && !assistant.model.functionCalling) {
      throw new ApiError(
        'tool_not_supported_for_model',
        'The model behind this assistant does not support function tools',
      );
    }

    // The only reads before the model is called: the thread and the user's context, at once.
    const previousId =
      request.previousResponseId === null ? null : parseResponseId(request.previousResponseId);
    const [previous, userContext, roster] = await Promise.all([
      previousId
        ? this.repository.loadThread(principal.organizationId, assistant.id, user.userId, previousId)
        : null,
      user.userId
        ? this.userContexts.loadForTurn(
            principal.organizationId,
            user.userId,
            assistant.id,
            this.config.memory.contextBudgetChars,
          )
        : null,
      this.rosters.forAssistant(assistant),
    ]);
    if (request.previousResponseId !== null && !previous) {
      throw new ApiError('response_not_found', `No response ${request.previousResponseId}`);
    }
    checkCallIds(request, previous);

    return {
      responseId: randomUUID(),
      createdAt: new Date(),
      principal,
      assistant,
      request,
      user,
      previous,
      conversationId: previous?.conversationId ?? randomUUID(),
      roster,
      userContext,
    };
  }

  /** Runs a turn for a JSON reply; upstream failures become 503s. */
  async respond(turn: PreparedTurn, signal: AbortSignal): Promise<ResponseObject> {
    const recorder = new ResponseRecorder(undefined, false);
    const plan = this.plan(turn, signal);
    const progress = new TurnProgress(plan);
    try {
      await this.runner.run(plan, recorder, progress);
    } catch (error) {
      const failure = this.failureOf(error);
      await this.persist(turn, recorder, progress, failure).catch(() => undefined);
      throw failure;
    }
    return this.persist(turn, recorder, progress, null);
  }

  /**
   * Runs a turn as an event stream. `response.created` goes out at once; the response is stored
   * before `response.completed`, so a client can continue from it immediately on any replica.
   */
  async stream(
    turn: PreparedTurn,
    target: StreamTarget,
    clientGone: AbortSignal,
    statusEvents: boolean,
  ): Promise<void> {
    target.open();
    this.metrics.streamOpened();
    // A stream ends when its client leaves, or when this replica's shutdown grace period ends.
    const signal = AbortSignal.any([clientGone, this.lifecycle.drainDeadline]);
    const recorder = new ResponseRecorder(target, statusEvents);
    const plan = this.plan(turn, signal);
    const progress = new TurnProgress(plan);
    try {
      recorder.emit('response.created', {
        response: this.toObject(turn, recorder, 'in_progress', null, null),
      });
      await this.runner.run(plan, recorder, progress);
      const response = await this.persist(turn, recorder, progress, null);
      recorder.emit('response.completed', { response });
      target.done();
    } catch (error) {
      const cutByShutdown = this.lifecycle.drainDeadline.aborted && !clientGone.aborted;
      const failure = cutByShutdown ? shutdownError() : this.failureOf(error);
      recorder.interrupt();
      const stored = this.persist(turn, recorder, progress, failure).catch((persistError: unknown) => {
        logUnexpected(this.logger, persistError, 'could not store a failed response');
      });
      if (cutByShutdown) {
        // The replica is leaving and its last seconds are short: the client hears it first, and
        // the shutdown sequence keeps the database open until the row is written.
        recorder.emit('response.error', { error: failure.toBody().error });
        target.close();
        await this.lifecycle.finishBeforeExit(stored);
        return;
      }
      // Otherwise the failed response is stored before the client hears of it, like a completed one.
      await stored;
      if (!clientGone.aborted) recorder.emit('response.error', { error: failure.toBody().error });
      target.close();
    } finally {
      this.metrics.streamClosed();
    }
  }

  async find(principal: ApiKeyPrincipal, id: string): Promise<ResponseObject> {
    const uuid = parseResponseId(id);
    const stored = uuid ? await this.repository.findForOrganization(principal.organizationId, uuid) : null;
    if (!stored) throw new ApiError('response_not_found', `No response ${id}`);
    return storedToObject(stored);
  }

  private plan(turn: PreparedTurn, signal: AbortSignal): TurnPlan {
    const { userContext, user } = turn;
    const toolContext = {
      organizationId: turn.principal.organizationId,
      assistantId: turn.assistant.id,
      userId: user.userId ?? undefined,
      userToken: user.userToken ?? undefined,
      userTokens: user.userTokens,
      signal,
    };
    // Memory is saved only on the generic path, for a known user who has not opted out.
    const memoryTool = user.userId && userContext && !userContext.memoryOptedOut ? [this.saveToMemory] : [];
    return {
      roster: turn.roster,
      startAgent: turn.previous?.activeAgent ?? null,
      toolsFor: async (agent) => {
        const catalogue =
          agent.toolNames.length > 0
            ? await this.toolCatalog.resolve(turn.principal.organizationId, agent.toolNames, {
                userToken: toolContext.userToken,
                userTokens: toolContext.userTokens,
                signal,
              })
            : [];
        return agent.name === null ? [...catalogue, ...memoryTool] : catalogue;
      },
      requestInstructions: turn.request.instructions,
      // Claims reach every agent; so does what the assistant remembers of the user.
      userContext: userContext ? renderUserContext(userContext) : null,
      history: turn.previous?.transcript ?? [],
      newMessages: inputToTranscript(turn.request.input),
      clientTools: turn.request.tools.map((tool) => ({
        name: tool.name,
        description: tool.description,
        parameters: tool.parameters,
      })),
      toolContext,
      maxIterations: this.config.turns.maxIterations,
      maxHandovers: this.config.turns.maxHandovers,
    };
  }

  private failureOf(error: unknown): ApiError {
    if (error instanceof ApiError) return error;
    if (error instanceof UpstreamError) return new ApiError(error.code, error.message);
    if (error instanceof TurnAbortedError) return new ApiError('server_error', 'The request was cancelled');
    return unexpectedFailure(this.logger, error, 'The turn failed');
  }

  private async persist(
    turn: PreparedTurn,
    recorder: ResponseRecorder,
    progress: TurnProgress,
    failure: ApiError | null,
  ): Promise<ResponseObject> {
    const completedAt = new Date();
    const status = failure ? 'failed' : progress.status;
    const usage = {
      input_tokens: progress.usage.inputTokens,
      output_tokens: progress.usage.outputTokens,
      total_tokens: progress.usage.inputTokens + progress.usage.outputTokens,
    };
    const error = failure?.toBody().error ?? null;
    const userTexts = userTextOf(turn.request.input);
    const outputText = recorder.outputText;
    const messages: TurnRecord['messages'] = userTexts.map((content, position) => ({
      id: randomUUID(),
      role: 'user',
      content,
      position,
      createdAt: turn.createdAt,
    }));
    if (!failure && outputText.trim()) {
      messages.push({
        id: randomUUID(),
        role: 'assistant',
        content: outputText,
        position: messages.length,
        createdAt: completedAt,
      });
    }
    await this.repository.saveTurn({
      responseId: turn.responseId,
      organizationId: turn.principal.organizationId,
      assistantId: turn.assistant.id,
      conversationId: turn.conversationId,
      newConversationTitle: turn.previous ? null : conversationTitle(userTexts[0] ?? ''),
      previousResponseId: turn.previous?.responseId ?? null,
      userId: turn.user.userId,
      status,
      depth: (turn.previous?.depth ?? 0) + 1,
      activeAgent: progress.activeAgent,
      instructions: turn.request.instructions,
      input: turn.request.input,
      output: recorder.output,
      outputText,
      // A failed turn keeps the user's input in the thread but not the partial reply.
      transcript: failure ? inputToTranscript(turn.request.input) : progress.transcript,
      usage,
      error,
      createdAt: turn.createdAt,
      completedAt,
      messages,
    });
    return this.toObject(turn, recorder, status, usage, error);
  }

  private toObject(
    turn: PreparedTurn,
    recorder: ResponseRecorder,
    status: ResponseObject['status'],
    usage: ResponseObject['usage'],
    error: ResponseObject['error'],
  ): ResponseObject {
    return responseObject({
      id: turn.responseId,
      assistantId: turn.assistant.id,
      conversationId: turn.conversationId,
      previousResponseId: turn.previous?.responseId ?? null,
      createdAt: turn.createdAt,
      status,
      instructions: turn.request.instructions,
      output: recorder.output,
      outputText: recorder.outputText,
      usage,
      error,
    });
  }
}

/**
 * `function_call_output` items must answer calls the previous response left pending (or calls
 * the client sent in this same input); a requires_action response needs every call answered.
 */
function checkCallIds(request: CreateResponseDto, previous: ThreadHead | null): void {
  const pending = new Set(
    previous?.status === 'requires_action'
      ? previous.output.flatMap((item) => (item.type === 'function_call' ? [item.call_id] : []))
      : [],
  );
  const sentCalls = new Set(
    request.input.flatMap((item) => (item.type === 'function_call' ? [item.callId] : [])),
  );
  const answered = new Set<string>();
  for (const item of request.input) {
    if (item.type !== 'function_call_output') continue;
    if (!pending.has(item.callId) && !sentCalls.has(item.callId)) {
      throw new ApiError('invalid_request', `No pending function call with call_id "${item.callId}"`);
    }
    answered.add(item.callId);
  }
  const unanswered = [...pending].filter((callId) => !answered.has(callId));
  if (unanswered.length > 0) {
    throw new ApiError(
      'invalid_request',
      `No function_call_output for call_id ${unanswered.map((id) => `"${id}"`).join(', ')}`,
    );
  }
}

function responseObject(source: {
  id: string;
  assistantId: string;
  conversationId: string;
  previousResponseId: string | null;
  createdAt: Date;
  status: ResponseObject['status'];
  instructions: string | null;
  output: OutputItem[];
  outputText: string;
  usage: ResponseObject['usage'];
  error: ResponseObject['error'];
}): ResponseObject {
  return {
    id: `resp_${source.id}`,
    object: 'response',
    created_at: Math.floor(source.createdAt.getTime() / 1000),
    status: source.status,
    model: `asst_${source.assistantId}`,
    output: source.output,
    output_text: source.outputText,
    previous_response_id: source.previousResponseId ? `resp_${source.previousResponseId}` : null,
    instructions: source.instructions,
    conversation: { id: source.conversationId },
    usage: source.usage,
    error: source.error,
    incomplete_details: null,
    metadata: {},
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
  };
}

function storedToObject(stored: StoredResponse): ResponseObject {
  return responseObject({
    id: stored.id,
    assistantId: stored.assistantId,
    conversationId: stored.conversationId,
    previousResponseId: stored.previousResponseId,
    createdAt: stored.createdAt,
    status: stored.status,
    instructions: stored.instructions,
    output: stored.output,
    outputText: stored.outputText,
    usage: stored.usage as ResponseObject['usage'],
    error: stored.error,
  });
}
