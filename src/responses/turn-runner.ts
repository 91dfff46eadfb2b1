import { Injectable } from '@nestjs/common';
import {
  HANDOVER_PREFIX,
  handoverAttributes,
  handoverDefinitions,
  handoverReason,
  handoverTarget,
} from './agent-handovers.js';
import { inChatSpan } from './model-call-span.js';
import { ModelCallStreamer } from './model-call-streamer.js';
import { keepToolResults, runServerTools } from './server-tool-calls.js';
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
  constructor(private readonly modelCall: ModelCallStreamer) {}

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
    // Made when a tool first runs: a turn that only answers holds no empty set while it streams.
    let announcedSignIns: Set<string> | undefined;
    for (let iteration = 0; iteration < plan.maxIterations; iteration++) {
      // The last iteration offers no server tools, so the model has to answer in words.
      const lastIteration = iteration === plan.maxIterations - 1;
      const toolBudgetLeft = plan.maxToolCalls === null || progress.toolCalls < plan.maxToolCalls;
      const serverTools = lastIteration || !toolBudgetLeft ? [] : tools;
      const handoverTools =
        lastIteration || handovers >= plan.maxHandovers ? [] : handoverDefinitions(plan.roster, agent);
      // Each model call runs in a GenAI `chat` span (when tracing is on).
      const calls = await inChatSpan(agent, progress, () =>
        this.modelCall.stream(plan, agent, serverTools, handoverTools, recorder, progress, forced),
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
        announcedSignIns ??= new Set();
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
}
