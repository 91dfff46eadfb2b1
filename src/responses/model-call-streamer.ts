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
import { readerOf } from '../llm/model-event-stream.js';
import { upstreamSpanAttributes } from '../llm/upstream-trace.js';
import { HANDOVER_PREFIX } from './agent-handovers.js';
import { fitToContextWindow } from './context-window.js';
import type { CollectedCall } from './server-tool-calls.js';
import { callOptions } from './turn-options.js';
import type { ServerTool } from '../tools/server-tool.js';
import type { AgentProfile } from '../specialists/agent-roster.service.js';
import type { ResponseRecorder } from './streaming/response-recorder.js';
import type { TurnPlan, TurnProgress } from '../turns/turn-plan.js';

/** No client tools (most turns): one empty set for all, not one per call held for the whole stream. */
const NO_NAMES: ReadonlySet<string> = new Set();

/**
 * One model call of a turn (the one model call site): builds its messages, tools and options,
 * relays what the model streams to the recorder as it arrives, and leaves the assistant's message
 * in the transcript. The per-token loop is here, in one method, so a token costs no extra hop.
 */
@Injectable()
export class ModelCallStreamer {
  constructor(
    private readonly providers: LlmProvidersService,
    private readonly metrics: Metrics,
  ) {}

  /** One model call; returns the tool calls it made (none means it answered). */
  async stream(
    plan: TurnPlan,
    agent: AgentProfile,
    serverTools: ServerTool[],
    handoverTools: ModelTool[],
    recorder: ResponseRecorder,
    progress: TurnProgress,
    forced: boolean,
  ): Promise<CollectedCall[]> {
    const clientNames: ReadonlySet<string> =
      plan.clientTools.length > 0 ? new Set(plan.clientTools.map((tool) => tool.name)) : NO_NAMES;
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
    // The stored thread goes to the provider as its text, unless the context window trims it
    // (a history that fits comes back as the same array: nothing trimmed, the text still goes).
    const trimmed =
      plan.truncation === 'auto' && agent.model.contextWindow !== undefined && !plan.history.empty
        ? fitToContextWindow(
            system,
            plan.history.messages(),
            progress.transcript,
            agent.model.contextWindow,
            options.maxOutputTokens,
          )
        : null;
    const fitted = trimmed !== null && trimmed !== plan.history.messages() ? trimmed : null;
    const messages = fitted
      ? [...system, ...fitted, ...progress.transcript]
      : [...system, ...progress.transcript];
    const history = fitted || plan.history.empty ? undefined : { at: system.length, stored: plan.history };
    // Made on the first tool call; the text kept as its deltas, joined once at the end: a string
    // grown by `+=` holds a 32-byte piece per token for as long as the stream is open.
    let calls: Map<number, CollectedCall> | undefined;
    const deltaTexts: string[] = [];

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
      // Read per upstream read: one await per wait for the whole call, none per layer under it.
      const call = readerOf(
        this.providers.for(agent.model).stream({
          settings: agent.model,
          access,
          messages,
          history,
          tools,
          options,
          signal: plan.toolContext.signal,
          log,
          relayed: recorder.live,
        }),
      );
      try {
        for (;;) {
          const batch = call.read();
          if (batch === null) {
            await call.readable();
            continue;
          }
          if (batch === undefined) break;
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
                deltaTexts.push(event.delta);
                recorder.text(event.delta, event.logprobs);
              } else if (event.type === 'reasoning') {
                recorder.reasoning(event.delta);
              } else if (event.type === 'tool_call') {
                calls ??= new Map();
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
      } finally {
        // Given up before its end (this loop failed, or the turn ended): the upstream is released.
        call.close();
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
    const text = deltaTexts.join('');
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

    const collected = calls ? [...calls.values()] : [];
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
