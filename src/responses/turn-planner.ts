import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { SaveToMemoryTool } from '../memory/save-to-memory.tool.js';
import { renderUserContext } from '../memory/user-context.prompt.js';
import { ToolCatalogService } from '../tools/tool-catalog.service.js';
import type { ServerTool } from '../tools/server-tool.js';
import { OfflineWebSearchTools } from '../tools/web-search/offline-web-search.tool.js';
import type { TurnPlan } from '../turns/turn-plan.js';
import { FileSearchTools } from '../vector-stores/file-search/file-search.tool.js';
import { ModelAccess } from './model-access.js';
import { StoredMessages } from '../llm/stored-messages.js';
import type { PreparedTurn } from './turn-preparer.js';

/**
 * A prepared turn as the runner takes it (TurnPlan): its agents' tools, built from the rows the
 * preparer read, its messages and its limits. Reads no database of its own.
 */
@Injectable()
export class TurnPlanner {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly toolCatalog: ToolCatalogService,
    private readonly saveToMemory: SaveToMemoryTool,
    private readonly modelAccess: ModelAccess,
    private readonly fileSearchTools: FileSearchTools,
    private readonly offlineWebSearch: OfflineWebSearchTools,
  ) {}

  /** What the runner needs of a prepared turn; `signal` ends the turn (client gone, shutdown). */
  plan(turn: PreparedTurn, signal: AbortSignal): TurnPlan {
    const { userContext, user } = turn;
    const toolContext = {
      organizationId: turn.principal.organizationId,
      assistantId: turn.assistant.id,
      userId: user.userId ?? undefined,
      userToken: user.userToken ?? undefined,
      userTokens: user.userTokens,
      signal,
    };
    // Memory is saved only on the generic path, for a known user who has not opted out, and only
    // by turns that are kept (`store: false` leaves nothing behind).
    const options = turn.request.options;
    const memoryTool =
      user.userId && userContext && !userContext.memoryOptedOut && options.store ? [this.saveToMemory] : [];
    // The request's file_search reaches every agent, as its function tools do.
    const fileSearch = turn.request.fileSearch
      ? [
          this.fileSearchTools.tool(
            turn.request.fileSearch,
            options.include.includes('file_search_call.results'),
          ),
        ]
      : [];
    // An offline web search also withholds the assistant's live ones: no live access was asked for.
    const webSearch = turn.request.webSearch ? [this.offlineWebSearch.tool(turn.request.webSearch)] : [];
    const keep = (tool: ServerTool) =>
      webSearch.length === 0 || (tool.kind !== 'web_search' && tool.definition.name !== 'web_search');
    return {
      roster: turn.roster,
      startAgent: turn.previous?.activeAgent ?? null,
      toolsFor: async (agent) => {
        // Built from the rows read in prepare(); only MCP servers are asked for their tool lists.
        const catalogue =
          agent.toolNames.length > 0
            ? await this.toolCatalog.resolveLoaded(turn.catalogue, agent.toolNames, {
                userToken: toolContext.userToken,
                userTokens: toolContext.userTokens,
                signal,
              })
            : [];
        const own = [...catalogue.filter(keep), ...fileSearch, ...webSearch];
        return agent.name === null ? [...own, ...memoryTool] : own;
      },
      modelAccess: (agent) => this.modelAccess.for(toolContext.organizationId, agent),
      requestInstructions: turn.request.instructions,
      // Claims reach every agent; so does what the assistant remembers of the user.
      userContext: userContext ? renderUserContext(userContext) : null,
      history: turn.previous?.history ?? StoredMessages.NONE,
      newMessages: turn.inputTranscript,
      clientTools: turn.request.tools.map((tool) => ({
        name: tool.name,
        description: tool.description,
        parameters: tool.parameters,
        strict: tool.strict,
      })),
      toolContext,
      maxIterations: this.config.turns.maxIterations,
      maxHandovers: this.config.turns.maxHandovers,
      modelOptions: turn.modelOptions,
      toolChoice: options.toolChoice,
      webSearchSources: options.include.includes('web_search_call.action.sources'),
      maxOutputTokens: turn.maxOutputTokens,
      maxToolCalls: options.maxToolCalls,
      truncation: options.truncation,
    };
  }
}
