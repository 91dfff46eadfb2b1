import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { LlmProvidersService } from '../llm/llm-providers.service.js';
import { Metrics } from '../metrics/metrics.service.js';
import {
  TurnAbortedError,
  UpstreamError,
  type ChatMessage,
  type ChatToolCall,
  type ModelTool,
  type TokenUsage,
  type UpstreamCallLog,
} from '../llm/llm.types.js';
import { modelName } from '../llm/model-settings.js';
import { upstreamSpanAttributes } from '../llm/upstream-trace.js';
import {
  HANDOVER_PREFIX,
  handoverAttributes,
  handoverDefinitions,
  handoverReason,
  handoverTarget,
} from './agent-handovers.js';
import { fitToContextWindow } from './context-window.js';
import { inChatSpan } from './model-call-span.js';
import { keepToolResults, runServerTools, type CollectedCall } from './server-tool-calls.js';
import { callOptions } from './turn-options.js';
import type { ServerTool } from '../tools/server-tool.js';
import type { AgentProfile } from '../specialists/agent-roster.service.js';
import { GENERIC_AGENT } from '../specialists/specialist-names.js';
import { itemId, type ResponseRecorder } from './streaming/response-recorder.js';
import { inSpan } from '../common/tracing/tracing.js';
import type { TurnPlan, TurnProgress } from '../turns/turn-plan.js';

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
      // Each model call runs in a GenAI `chat` span (when tracing is on).
      const calls = await inChatSpan(agent, progress, () =>
        this.streamModel(plan, agent, serverTools, handoverTools, recorder, progress, forced),
      );
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
        const results = await runServerTools(
          serverCalls,
          serverTools,
          plan.toolContext,
          recorder,
          plan.webSearchSources,
        );
        keepToolResults(serverCalls, results, progress.transcript, recorder, announcedSignIns);
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
    // The targets tried; usage is priced as the target that answered (a fallback's own prices).
    const log: UpstreamCallLog = { attempts: [] };
    let deltas = 0;
    const count = (usage: TokenUsage) =>
      progress.addUsage(
        usage,
        log.answeredBy ? log.answeredBy.prices : agent.model.prices,
        log.answeredBy?.model ?? modelName(agent.model),
      );
    try {
      const access = await plan.modelAccess(agent);
      for await (const batch of this.providers.for(agent.model).stream({
        settings: agent.model,
        access,
        messages,
        tools,
        options,
        signal: plan.toolContext.signal,
        log,
        relayed: recorder.live,
      })) {
        if (firstToken) {
          firstToken = false;
          this.metrics.timeToFirstToken(provider, (performance.now() - startedAt) / 1000);
          if (plan.beforeFirstEvents) {
            try {
              await plan.beforeFirstEvents;
            } catch (error) {
              // The start was refused: nothing of the batch is relayed, but a usage chunk in it
              // is what the upstream billed, and the refused turn still counts it.
              for (const event of batch) if (event.type === 'usage') count(event.usage);
              throw error;
            }
          }
        }
        // One upstream read, one socket write; wait only when the client is not keeping up.
        recorder.cork();
        try {
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
            } else if (event.type === 'stopped_short') {
              progress.incompleteReason = event.reason;
            } else {
              count(event.usage);
            }
          }
        } finally {
          recorder.uncork();
        }
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
      progress.upstreamAttempts.push(...log.attempts);
      upstreamSpanAttributes(log);
      // The model that answered names the Response when the assistant asks for it (reportModel).
      const answering = log.answeredBy?.model ?? (firstToken ? undefined : modelName(agent.model));
      if (answering) progress.answeringModel = answering;
    }
    if (plan.toolContext.signal.aborted) throw new TurnAbortedError();
    if (progress.incompleteReason) {
      // Cut by max_output_tokens or a content filter: half-written calls are not run, and the
      // response is incomplete.
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
}
