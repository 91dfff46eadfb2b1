import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { LlmProvidersService } from '../llm/llm-providers.service.js';
import { Metrics } from '../metrics/metrics.service.js';
import { costOf, type ModelPrices } from '../llm/model-settings.js';
import {
  TurnAbortedError,
  UpstreamError,
  type ChatMessage,
  type ChatToolCall,
  type ModelOptions,
  type ModelTool,
  type TokenUsage,
  type UpstreamAccess,
} from '../llm/llm.types.js';
import type { ToolChoice } from './dto/response-options.dto.js';
import { fitToContextWindow } from './context-window.js';
import { callOptions } from './turn-options.js';
import type { ServerTool, ToolExecutionContext, ToolResult } from '../tools/server-tool.js';
import type { AgentProfile, AgentRoster } from '../specialists/agent-roster.service.js';
import { GENERIC_AGENT } from '../specialists/specialist-names.js';
import { itemId, type ResponseRecorder } from './streaming/response-recorder.js';
import type { Attributes } from '@opentelemetry/api';
import { capturesContent, inSpan, SpanKind, tracingActive } from '../common/tracing/tracing.js';

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
  history: ChatMessage[];
  newMessages: ChatMessage[];
  clientTools: ModelTool[];
  toolContext: ToolExecutionContext;
  maxIterations: number;
  maxHandovers: number;
  /** The request's model parameters (sampling, format, reasoning, identity), the same for every call. */
  modelOptions: ModelOptions;
  toolChoice: ToolChoice;
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
  /** The same tokens split by the currency of the models' prices (`''`: unpriced), with their cost. */
  readonly spend = new Map<string, Required<TokenUsage> & { cost: number }>();
  activeAgent: string | null;
  status: 'completed' | 'requires_action' | 'incomplete' = 'completed';
  /** Why the response stopped short (`max_output_tokens`), when it did. */
  incompleteReason: 'max_output_tokens' | null = null;
  /** Server-side tool calls made so far, against `max_tool_calls`. */
  toolCalls = 0;

  constructor(plan: TurnPlan) {
    this.transcript = [...plan.newMessages];
    this.activeAgent = plan.startAgent;
  }
}

interface CollectedCall {
  id: string;
  name: string;
  arguments: string;
  kind: 'client' | 'server' | 'handover';
  handle?: number;
}

const HANDOVER_PREFIX = 'transfer_to_';

/**
 * Runs the model loop of one turn: call the model, relay text and client function calls to the
 * recorder, run server-side tools and call the model again, until it answers, asks the client
 * for a function result, or the iteration budget is spent.
 */
@Injectable()
export class TurnRunner {
  constructor(
    private readonly providers: LlmProvidersService,
    private readonly metrics: Metrics,
  ) {}

  /** The turn's agent loop; one `invoke_agent` span around it when tracing is on. */
  run(plan: TurnPlan, recorder: ResponseRecorder, progress: TurnProgress): Promise<void> {
    return inSpan(
      'invoke_agent',
      { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.id': plan.toolContext.assistantId },
      () => this.loop(plan, recorder, progress),
    );
  }

  private async loop(plan: TurnPlan, recorder: ResponseRecorder, progress: TurnProgress): Promise<void> {
    let agent = (plan.startAgent && plan.roster.specialists.get(plan.startAgent)) || plan.roster.generic;
    progress.activeAgent = agent.name;
    let tools = await plan.toolsFor(agent);
    let handovers = 0;
    // A forced tool_choice applies until the model has called a tool; then it answers freely.
    let forced = plan.toolChoice.mode === 'required';
    const announcedSignIns = new Set<string>();
    for (let iteration = 0; iteration < plan.maxIterations; iteration++) {
      // The last iteration offers no server tools, so the model has to answer in words.
      const lastIteration = iteration === plan.maxIterations - 1;
      const toolBudgetLeft = plan.maxToolCalls === null || progress.toolCalls < plan.maxToolCalls;
      const serverTools = lastIteration || !toolBudgetLeft ? [] : tools;
      const handoverTools =
        lastIteration || handovers >= plan.maxHandovers ? [] : handoverDefinitions(plan.roster, agent);
      const calls = await this.callModel(plan, agent, serverTools, handoverTools, recorder, progress, forced);
      if (progress.incompleteReason) return;
      if (calls.length === 0) return;
      forced = false;

      const allServerCalls = calls.filter((call) => call.kind === 'server');
      // Calls beyond max_tool_calls are answered with an error instead of being run.
      const budget =
        plan.maxToolCalls === null ? Infinity : Math.max(0, plan.maxToolCalls - progress.toolCalls);
      const serverCalls = allServerCalls.slice(0, budget);
      progress.toolCalls += serverCalls.length;
      if (serverCalls.length > 0) {
        recorder.status('tool_calling', 'Calling tools', {
          tools: serverCalls.map((call) => call.name),
        });
        const results = await this.runServerTools(serverCalls, serverTools, plan.toolContext, recorder);
        for (const [index, call] of serverCalls.entries()) {
          const result = results[index];
          progress.transcript.push({ role: 'tool', tool_call_id: call.id, content: toolMessage(result) });
          const signIn = result.ok ? undefined : result.oauthRequired;
          if (signIn && !announcedSignIns.has(`${signIn.pluginId}:${signIn.providerId}`)) {
            announcedSignIns.add(`${signIn.pluginId}:${signIn.providerId}`);
            recorder.addItem({
              type: 'oauth_required',
              id: itemId('oar'),
              plugin_id: signIn.pluginId,
              plugin_name: signIn.pluginName,
              provider_id: signIn.providerId,
              required_scopes: signIn.requiredScopes,
              auth_url: signIn.authUrl,
            });
          }
        }
      }

      for (const call of allServerCalls.slice(budget)) {
        progress.transcript.push({
          role: 'tool',
          tool_call_id: call.id,
          content: JSON.stringify({ error: 'Not run: the response reached its max_tool_calls' }),
        });
      }

      let switched = false;
      for (const call of calls.filter((candidate) => candidate.kind === 'handover')) {
        const target = handoverTarget(plan.roster, call.name);
        let reply: string;
        if (!target)
          reply = JSON.stringify({
            error: `There is no specialist called "${call.name.slice(HANDOVER_PREFIX.length)}"`,
          });
        else if (switched || handovers >= plan.maxHandovers)
          reply = JSON.stringify({ error: 'Handover refused: too many handovers in this turn' });
        else {
          switched = true;
          handovers += 1;
          recorder.addItem({
            type: 'handover',
            id: itemId('hov'),
            from_specialist: agent.name ?? GENERIC_AGENT,
            to_specialist: target.name ?? GENERIC_AGENT,
            reason: handoverReason(call.arguments),
          });
          const from = agent;
          agent = target;
          progress.activeAgent = agent.name;
          tools = await inSpan('handover', handoverAttributes(from, target), () => plan.toolsFor(target));
          reply = JSON.stringify({ transferred_to: agent.name ?? GENERIC_AGENT });
        }
        progress.transcript.push({ role: 'tool', tool_call_id: call.id, content: reply });
      }

      if (calls.some((call) => call.kind === 'client')) {
        progress.status = 'requires_action';
        return;
      }
    }
  }

  /** One model call in a GenAI `chat` span (when tracing is on); returns the tool calls it made. */
  private callModel(
    plan: TurnPlan,
    agent: AgentProfile,
    serverTools: ServerTool[],
    handoverTools: ModelTool[],
    recorder: ResponseRecorder,
    progress: TurnProgress,
    forced: boolean,
  ): Promise<CollectedCall[]> {
    const call = () => this.streamModel(plan, agent, serverTools, handoverTools, recorder, progress, forced);
    if (!tracingActive()) return call();
    const before = { ...progress.usage };
    const attributes = chatAttributes(agent);
    return inSpan(
      `chat ${String(attributes['gen_ai.request.model'])}`,
      attributes,
      async (span) => {
        const calls = await call();
        span?.setAttributes({
          'gen_ai.usage.input_tokens': progress.usage.inputTokens - before.inputTokens,
          'gen_ai.usage.output_tokens': progress.usage.outputTokens - before.outputTokens,
          'gen_ai.response.finish_reasons': [
            progress.incompleteReason ? 'length' : calls.length > 0 ? 'tool_calls' : 'stop',
          ],
        });
        // Completion text only when the operator turned it on (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT).
        if (capturesContent())
          span?.setAttribute('gen_ai.output.messages', JSON.stringify([progress.transcript.at(-1)]));
        return calls;
      },
      SpanKind.CLIENT,
    );
  }

  /** One model call; returns the tool calls it made (none means it answered). */
  private async streamModel(
    plan: TurnPlan,
    agent: AgentProfile,
    serverTools: ServerTool[],
    handoverTools: ModelTool[],
    recorder: ResponseRecorder,
    progress: TurnProgress,
    forced: boolean,
  ): Promise<CollectedCall[]> {
    const clientNames = new Set(plan.clientTools.map((tool) => tool.name));
    let tools: ModelTool[] = [
      ...plan.clientTools,
      ...serverTools.map((tool) => tool.definition).filter((tool) => !clientNames.has(tool.name)),
      ...handoverTools,
    ];
    const allowed = plan.toolChoice.allowed;
    if (allowed) tools = tools.filter((tool) => allowed.includes(tool.name));
    const options = callOptions(plan, tools, serverTools, forced, progress.usage.outputTokens);
    if (options === null) {
      progress.incompleteReason = 'max_output_tokens';
      progress.status = 'incomplete';
      return [];
    }
    const system = this.systemMessages(plan, agent);
    const history =
      plan.truncation === 'auto' && agent.model.contextWindow !== undefined
        ? fitToContextWindow(
            system,
            plan.history,
            progress.transcript,
            agent.model.contextWindow,
            options.maxOutputTokens,
          )
        : plan.history;
    const messages = [...system, ...history, ...progress.transcript];
    const calls = new Map<number, CollectedCall>();
    let text = '';

    const provider = agent.model.provider;
    const startedAt = performance.now();
    let firstToken = true;
    let deltas = 0;
    try {
      const access = await plan.modelAccess(agent);
      for await (const batch of this.providers.for(agent.model).stream({
        settings: agent.model,
        access,
        messages,
        tools,
        options,
        signal: plan.toolContext.signal,
      })) {
        if (firstToken) {
          firstToken = false;
          this.metrics.timeToFirstToken(provider, (performance.now() - startedAt) / 1000);
          if (plan.beforeFirstEvents) await plan.beforeFirstEvents;
        }
        // One upstream read, one socket write; wait only when the client is not keeping up.
        recorder.batch(() => {
          for (const event of batch) {
            if (event.type === 'text') {
              deltas += 1;
              text += event.delta;
              recorder.text(event.delta, event.logprobs);
            } else if (event.type === 'reasoning') {
              recorder.reasoning(event.delta);
            } else if (event.type === 'tool_call') {
              let call = calls.get(event.index);
              if (!call) {
                const name = event.name ?? '';
                const kind = clientNames.has(name)
                  ? 'client'
                  : name.startsWith(HANDOVER_PREFIX)
                    ? 'handover'
                    : 'server';
                call = { id: event.id || `call_${randomUUID()}`, name, arguments: '', kind };
                calls.set(event.index, call);
                if (kind === 'client') call.handle = recorder.beginFunctionCall(call.id, name);
              }
              if (event.argumentsDelta) {
                call.arguments += event.argumentsDelta;
                if (call.handle !== undefined)
                  recorder.functionCallArguments(call.handle, event.argumentsDelta);
              }
            } else if (event.type === 'length_limit') {
              progress.incompleteReason = 'max_output_tokens';
            } else {
              const usage = progress.usage;
              usage.inputTokens += event.usage.inputTokens;
              usage.outputTokens += event.usage.outputTokens;
              usage.cachedTokens += event.usage.cachedTokens ?? 0;
              usage.reasoningTokens += event.usage.reasoningTokens ?? 0;
              addSpend(progress, agent.model.prices, event.usage);
            }
          }
        });
        const drained = recorder.drain();
        if (drained) await drained;
      }
      this.metrics.upstreamCall(provider, (performance.now() - startedAt) / 1000, 'ok');
    } catch (error) {
      const outcome = error instanceof UpstreamError ? error.code : 'aborted';
      this.metrics.upstreamCall(provider, (performance.now() - startedAt) / 1000, outcome);
      throw error;
    } finally {
      this.metrics.tokensRelayed(deltas);
    }
    if (plan.toolContext.signal.aborted) throw new TurnAbortedError();
    if (progress.incompleteReason) {
      // Cut by max_output_tokens: half-written calls are not run, and the response is incomplete.
      progress.status = 'incomplete';
      recorder.endMessage('incomplete');
      recorder.interrupt();
      progress.transcript.push({ role: 'assistant', content: text });
      return [];
    }
    recorder.endMessage();
    recorder.finishFunctionCalls();

    const collected = [...calls.values()];
    const toolCalls: ChatToolCall[] = collected.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    }));
    progress.transcript.push(
      toolCalls.length > 0
        ? { role: 'assistant', content: text || null, tool_calls: toolCalls }
        : { role: 'assistant', content: text },
    );
    return collected;
  }

  private systemMessages(plan: TurnPlan, agent: AgentProfile): ChatMessage[] {
    const messages: ChatMessage[] = [];
    if (agent.instructions.trim()) messages.push({ role: 'system', content: agent.instructions });
    if (plan.requestInstructions?.trim())
      messages.push({ role: 'system', content: plan.requestInstructions });
    if (plan.userContext) messages.push({ role: 'system', content: plan.userContext });
    return messages;
  }

  /**
   * Runs one iteration's server tools concurrently. Web searches are announced before they
   * start and completed in order, so their events read as the spec describes.
   */
  private async runServerTools(
    calls: CollectedCall[],
    tools: ServerTool[],
    context: ToolExecutionContext,
    recorder: ResponseRecorder,
  ): Promise<ToolResult[]> {
    const started = calls.map((call) => {
      const tool = tools.find((candidate) => candidate.definition.name === call.name);
      const args = parseArguments(call.arguments);
      const query = typeof args?.query === 'string' ? args.query : '';
      let complete: ((result: ToolResult) => void) | undefined;
      if (tool?.kind === 'web_search' && args) {
        const done = recorder.beginWebSearch(call.id, query);
        complete = (result) => done(result.ok ? (result.webSearch?.resultsCount ?? 0) : 0);
      } else if (tool?.kind === 'file_search' && args) {
        complete = recorder.beginFileSearch(call.id, [query]);
      }
      return { tool, args, complete };
    });
    const results = await Promise.all(
      started.map(({ tool, args }, index): Promise<ToolResult> => {
        if (!tool) return Promise.resolve({ ok: false, error: `Unknown tool "${calls[index].name}"` });
        if (!args) return Promise.resolve({ ok: false, error: 'The tool arguments were not a JSON object' });
        return inSpan(`execute_tool ${tool.definition.name}`, toolAttributes(tool, calls[index].id), () =>
          tool.execute(args, context),
        );
      }),
    );
    for (const [index, { complete }] of started.entries()) {
      const result = results[index];
      if (complete) complete(result);
    }
    return results;
  }
}

/** Adds one model call's usage, and its cost at the agent's model prices, to the turn's spend. */
function addSpend(progress: TurnProgress, prices: ModelPrices | undefined, usage: TokenUsage): void {
  const currency = prices?.currency ?? '';
  let spent = progress.spend.get(currency);
  if (!spent) {
    spent = { inputTokens: 0, outputTokens: 0, cachedTokens: 0, reasoningTokens: 0, cost: 0 };
    progress.spend.set(currency, spent);
  }
  spent.inputTokens += usage.inputTokens;
  spent.outputTokens += usage.outputTokens;
  spent.cachedTokens += usage.cachedTokens ?? 0;
  spent.reasoningTokens += usage.reasoningTokens ?? 0;
  if (prices) spent.cost += costOf(usage, prices);
}

function parseArguments(raw: string): Record<string, unknown> | null {
  try {
    const parsed: unknown = raw.trim() ? JSON.parse(raw) : {};
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** `transfer_to_<name>` for every other agent of the assistant, the generic path included. */
function handoverDefinitions(roster: AgentRoster, current: AgentProfile): ModelTool[] {
  if (roster.specialists.size === 0) return [];
  const targets = [roster.generic, ...roster.specialists.values()].filter(
    (agent) => agent.name !== current.name,
  );
  return targets.map((target) => ({
    name: `${HANDOVER_PREFIX}${target.name ?? GENERIC_AGENT}`,
    description: `Hand the conversation over to ${target.name ?? 'the general assistant'}: ${target.role}`,
    parameters: {
      type: 'object',
      properties: { reason: { type: 'string', description: 'Why this agent should take over' } },
      required: ['reason'],
    },
  }));
}

function handoverTarget(roster: AgentRoster, toolName: string): AgentProfile | undefined {
  const name = toolName.slice(HANDOVER_PREFIX.length);
  return name === GENERIC_AGENT ? roster.generic : roster.specialists.get(name);
}

function handoverReason(raw: string): string {
  const reason = parseArguments(raw)?.reason;
  return typeof reason === 'string' ? reason : '';
}

/** What the model reads back from a server tool: its output, or a readable error. */
function toolMessage(result: ToolResult): string {
  return result.ok ? result.output : JSON.stringify({ error: result.error });
}

/** GenAI semantic conventions of a model call: names, never prompt or completion text. */
function chatAttributes(agent: AgentProfile): Attributes {
  const model = agent.model;
  return {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': model.provider === 'offline' ? 'switchboard.offline' : 'openai',
    'gen_ai.request.model': model.provider === 'offline' ? 'offline' : model.model,
    'gen_ai.agent.name': agent.name ?? GENERIC_AGENT,
    ...(model.provider === 'offline' ? {} : { 'server.address': new URL(model.baseUrl).hostname }),
  };
}

function toolAttributes(tool: ServerTool, callId: string): Attributes {
  return {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': tool.definition.name,
    'gen_ai.tool.call.id': callId,
    'gen_ai.tool.type': 'extension',
  };
}

function handoverAttributes(from: AgentProfile, to: AgentProfile): Attributes {
  return {
    'switchboard.handover.from': from.name ?? GENERIC_AGENT,
    'switchboard.handover.to': to.name ?? GENERIC_AGENT,
  };
}
