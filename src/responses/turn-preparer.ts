import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { ApiKeyPrincipal } from '../api-keys/api-keys.service.js';
import { AssistantsService } from '../assistants/assistants.service.js';
import type { AssistantEntity } from '../assistants/entities/assistant.entity.js';
import { ApiError } from '../common/errors/error-catalogue.js';
import { currentRequestContext } from '../common/logging/request-context.js';
import { assertUnderQuota } from '../common/errors/quota.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { UserContextService, type TurnUserContext } from '../memory/user-context.service.js';
import { AgentRosterService, type AgentRoster } from '../specialists/agent-roster.service.js';
import { ToolCatalogService, type LoadedCatalogue } from '../tools/tool-catalog.service.js';
import {
  parseConversationId,
  parseResponseId,
  type CreateResponseDto,
  type UserHeaders,
} from './dto/create-response.dto.js';
import { InputAttachments } from './input-attachments.js';
import { ConversationStore } from './store/conversation-store.repository.js';
import { UsageBudgetService } from '../usage/usage-budget.service.js';
import { TurnStore } from './store/turn-store.repository.js';
import { inputToTranscript } from '../turns/transcript.js';
import { resolveOptions, type ResolvedOptions } from './turn-options.js';
import { inSpan } from '../common/tracing/tracing.js';
import type { InputItem } from '../turns/input-item.types.js';
import type { ChatMessage } from '../llm/llm.types.js';
import type { ThreadHead } from '../turns/turn.types.js';
import { FileSearchTools } from '../vector-stores/file-search/file-search.tool.js';

/**
 * A turn validated against the database and ready to run: nothing left to read but tools' own
 * servers; its options resolved against the assistant (echoed params, model options, output limit).
 */
export interface PreparedTurn extends ResolvedOptions {
  responseId: string;
  createdAt: Date;
  principal: ApiKeyPrincipal;
  assistant: AssistantEntity;
  request: CreateResponseDto;
  /** The input as the model sees it: images and files checked, their URLs fetched and inlined. */
  modelInput: InputItem[];
  /** `modelInput` as the model's messages, built once for the plan, the start row and a failed turn's record. */
  inputTranscript: ChatMessage[];
  user: UserHeaders;
  previous: ThreadHead | null;
  conversationId: string;
  roster: AgentRoster;
  /** The catalogue rows of every agent of the roster, so a handover reads no database. */
  catalogue: LoadedCatalogue;
  userContext: TurnUserContext | null;
}

const NO_ATTRIBUTES = {};

/**
 * Everything that can fail before any byte is sent, and every database read of a turn: the
 * assistant, then at once the thread, the user's context and the roster with its tool rows.
 * Errors here are plain HTTP errors even for `stream: true`.
 */
@Injectable()
export class TurnPreparer {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly assistants: AssistantsService,
    private readonly store: TurnStore,
    private readonly conversations: ConversationStore,
    private readonly rosters: AgentRosterService,
    private readonly userContexts: UserContextService,
    private readonly toolCatalog: ToolCatalogService,
    private readonly attachments: InputAttachments,
    private readonly budgets: UsageBudgetService,
    private readonly fileSearchTools: FileSearchTools,
  ) {}

  async prepare(
    principal: ApiKeyPrincipal,
    request: CreateResponseDto,
    user: UserHeaders,
  ): Promise<PreparedTurn> {
    const organizationId = principal.organizationId;
    // The monthly token budget: cached per organization, so usually no query of its own.
    await this.budgets.check(organizationId);
    const assistant = await this.assistants.findForTurn(organizationId, request.assistantId);
    if (!assistant) throw new ApiError('assistant_not_found', `No assistant asst_${request.assistantId}`);
    const log = currentRequestContext();
    if (log) log.assistantId = assistant.id;
    if (request.tools.length > 0 && !assistant.model.functionCalling) {
      throw new ApiError(
        'tool_not_supported_for_model',
        'The model behind this assistant does not support function tools',
      );
    }
    const resolved = resolveOptions(request, assistant.model);
    if (request.fileSearch) await this.fileSearchTools.check(organizationId, request.fileSearch);

    const previousId =
      request.previousResponseId === null ? null : parseResponseId(request.previousResponseId);
    const conversationId =
      request.conversationId === null ? null : parseConversationId(request.conversationId);
    // Every read before the first byte, at once (one span when tracing is on).
    const [modelInput, previous, conversation, userContext, [roster, catalogue]] = await inSpan(
      'load context',
      NO_ATTRIBUTES,
      () =>
        Promise.all([
          this.attachments.forModel(request.input, assistant.model, { organizationId, userId: user.userId }),
          previousId ? this.store.loadThread(organizationId, assistant.id, user.userId, previousId) : null,
          conversationId ? this.conversations.loadThread(organizationId, user.userId, conversationId) : null,
          user.userId
            ? this.userContexts.loadForTurn(
                organizationId,
                user.userId,
                assistant.id,
                this.config.memory.contextBudgetChars,
              )
            : null,
          this.rosters.forAssistant(assistant).then(async (roster) => {
            const agents = [roster.generic, ...roster.specialists.values()];
            const names = agents.flatMap((agent) => agent.toolNames);
            return [roster, await this.toolCatalog.load(organizationId, names)] as const;
          }),
        ]),
    );
    if (request.previousResponseId !== null && !previous) {
      throw new ApiError('response_not_found', `No response ${request.previousResponseId}`);
    }
    if (previous && !previous.complete) {
      throw new ApiError(
        'invalid_request',
        `previous_response_id ${request.previousResponseId} continues a thread from which an earlier response was deleted; it can no longer be continued`,
      );
    }
    if (request.conversationId !== null && !conversation) {
      throw new ApiError('conversation_not_found', `No conversation ${request.conversationId}`);
    }
    if (conversation?.conversation.assistantId && conversation.conversation.assistantId !== assistant.id) {
      throw new ApiError(
        'invalid_request',
        `Conversation ${request.conversationId} belongs to assistant asst_${conversation.conversation.assistantId}`,
      );
    }
    if (conversation?.head && !conversation.head.complete) {
      throw new ApiError(
        'invalid_request',
        `Conversation ${request.conversationId} continues a thread from which a response was deleted; it can no longer be continued`,
      );
    }
    // Continuing a conversation is continuing its newest turn, as previous_response_id would.
    const head = conversation ? conversation.head : previous;
    checkCallIds(request, head);
    // The thread as the model gets it is what is stored of it: its length is the quota's measure.
    // Counted only when its text could hold the quota (counting means parsing every message).
    const itemQuota = this.config.quotas.itemsPerConversation;
    if (head && itemQuota !== 0 && head.history.atMost >= itemQuota) {
      assertUnderQuota(
        head.history.messages().length,
        itemQuota,
        'items in one conversation (compact it, or start a new one)',
        'QUOTA_ITEMS_PER_CONVERSATION',
      );
    }

    return {
      responseId: randomUUID(),
      createdAt: new Date(),
      principal,
      assistant,
      request,
      modelInput,
      inputTranscript: inputToTranscript(modelInput),
      user,
      previous: head,
      conversationId: conversation?.conversation.id ?? previous?.conversationId ?? randomUUID(),
      roster,
      catalogue,
      userContext,
      ...resolved,
    };
  }
}

/**
 * `function_call_output` items must answer calls the previous response left pending (or calls
 * the client sent in this same input); a requires_action response needs every call answered.
 */
function checkCallIds(request: CreateResponseDto, previous: ThreadHead | null): void {
  // Most turns answer no call and continue none that waits for one: nothing to match.
  const waiting = previous?.status === 'requires_action';
  if (!waiting && !request.input.some((item) => item.type === 'function_call_output')) return;
  const pending = new Set(
    waiting ? previous.output.flatMap((item) => (item.type === 'function_call' ? [item.call_id] : [])) : [],
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
