import type { StoredMessages } from '../llm/stored-messages.js';
import type {
  ChatMessage,
  IncompleteReason,
  ModelOptions,
  ModelTool,
  TokenUsage,
  UpstreamAccess,
  UpstreamAttempt,
} from '../llm/llm.types.js';
import { costOf, type ModelPrices } from '../llm/model-settings.js';
import type { AgentProfile, AgentRoster } from '../specialists/agent-roster.service.js';
import type { ServerTool, ToolExecutionContext } from '../tools/server-tool.js';

/**
 * `tool_choice`, normalized: `mode` says whether a call is forced, `name` which function must be
 * called, `allowed` narrows the tools offered (`allowed_tools`), `hosted` names a server tool by
 * its kind (`web_search`, `file_search`); `echo` is what was sent, for the Response.
 */
export interface ToolChoice {
  mode: 'auto' | 'none' | 'required';
  name: string | null;
  allowed: string[] | null;
  hosted: 'web_search' | 'file_search' | null;
  echo: unknown;
}

export interface TurnPlan {
  roster: AgentRoster;
  /** The specialist that answered last on this branch; null starts on the generic path. */
  startAgent: string | null;
  /** The server-side tools of an agent (its catalogue tools, and memory on the generic path). */
  toolsFor(agent: AgentProfile): Promise<ServerTool[]>;
  /** What an agent's model call may send and reach (ModelAccess); rejected, nothing is sent. */
  modelAccess(agent: AgentProfile): Promise<UpstreamAccess | undefined>;
  requestInstructions: string | null;
  /** Claims and memory of the user, already delimited for the model; null when none. */
  userContext: string | null;
  /** The thread this turn continues, as stored (StoredMessages.NONE for a new one). */
  history: StoredMessages;
  newMessages: ChatMessage[];
  clientTools: ModelTool[];
  toolContext: ToolExecutionContext;
  maxIterations: number;
  maxHandovers: number;
  /** The request's model parameters (sampling, format, reasoning, identity), the same for every call. */
  modelOptions: ModelOptions;
  toolChoice: ToolChoice;
  /** include `web_search_call.action.sources`: web_search_call items list their results' URLs. */
  webSearchSources: boolean;
  /** For the whole response, across the tool loop. */
  maxOutputTokens: number | null;
  maxToolCalls: number | null;
  /** `auto` leaves the oldest turns out when the thread outgrows the agent's context window. */
  truncation: 'auto' | 'disabled';
  /**
   * Awaited before a model call's first events are handled (the call is already on its way): a
   * stream opens once its start row exists. Rejected, the turn ends with that error.
   */
  beforeFirstEvents?: Promise<unknown>;
}

/** What the turn has produced so far; kept when it fails so the partial work can be stored. */
export class TurnProgress {
  /** Messages this turn adds to the thread: its input, then replies, tool calls and results. */
  readonly transcript: ChatMessage[];
  usage: Required<TokenUsage> = { inputTokens: 0, outputTokens: 0, cachedTokens: 0, reasoningTokens: 0 };
  /**
   * The same tokens split by the model that answered and the currency of its prices (`''`:
   * unpriced), with their cost; keyed by `[model, currency]` as JSON.
   */
  readonly spend = new Map<
    string,
    Required<TokenUsage> & { model: string; currency: string; cost: number }
  >();
  activeAgent: string | null;
  status: 'completed' | 'requires_action' | 'incomplete' = 'completed';
  /** The upstream model whose output the latest model call received (a fallback's, after a failover). */
  answeringModel: string | null = null;
  /** Why the response stopped short (`max_output_tokens`, `content_filter`), when it did. */
  incompleteReason: IncompleteReason | null = null;
  /** Server-side tool calls made so far, against `max_tool_calls`. */
  toolCalls = 0;
  /** The upstream targets every model call tried, in order (docs/resilience.md). */
  readonly upstreamAttempts: UpstreamAttempt[] = [];

  constructor(plan: TurnPlan) {
    this.transcript = [...plan.newMessages];
    this.activeAgent = plan.startAgent;
  }

  /** One model call's usage, and its cost at the answering model's prices (none: unpriced). */
  addUsage(usage: TokenUsage, prices: ModelPrices | undefined, model: string): void {
    this.usage.inputTokens += usage.inputTokens;
    this.usage.outputTokens += usage.outputTokens;
    this.usage.cachedTokens += usage.cachedTokens ?? 0;
    this.usage.reasoningTokens += usage.reasoningTokens ?? 0;
    const currency = prices?.currency ?? '';
    const key = JSON.stringify([model, currency]);
    let spent = this.spend.get(key);
    if (!spent) {
      spent = {
        model,
        currency,
        inputTokens: 0,
        outputTokens: 0,
        cachedTokens: 0,
        reasoningTokens: 0,
        cost: 0,
      };
      this.spend.set(key, spent);
    }
    spent.inputTokens += usage.inputTokens;
    spent.outputTokens += usage.outputTokens;
    spent.cachedTokens += usage.cachedTokens ?? 0;
    spent.reasoningTokens += usage.reasoningTokens ?? 0;
    if (prices) spent.cost += costOf(usage, prices);
  }
}
