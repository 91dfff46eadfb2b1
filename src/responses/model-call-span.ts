import type { Attributes } from '@opentelemetry/api';
import { modelName } from '../llm/model-settings.js';
import { capturesContent, inSpan, SpanKind, tracingActive } from '../common/tracing/tracing.js';
import type { AgentProfile } from '../specialists/agent-roster.service.js';
import { GENERIC_AGENT } from '../specialists/specialist-names.js';
import type { TurnProgress } from '../turns/turn-plan.js';

/**
 * One model call in a GenAI `chat` span when tracing is on (names and token counts, never prompt
 * or completion text unless the operator asks); `call` returns the tool calls the model made.
 */
export function inChatSpan<T extends unknown[]>(
  agent: AgentProfile,
  progress: TurnProgress,
  call: () => Promise<T>,
): Promise<T> {
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
          progress.incompleteReason === 'max_output_tokens'
            ? 'length'
            : (progress.incompleteReason ?? (calls.length > 0 ? 'tool_calls' : 'stop')),
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

/** GenAI semantic conventions of a model call: names, never prompt or completion text. */
function chatAttributes(agent: AgentProfile): Attributes {
  const model = agent.model;
  return {
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': model.provider === 'offline' ? 'switchboard.offline' : 'openai',
    'gen_ai.request.model': modelName(model),
    'gen_ai.agent.name': agent.name ?? GENERIC_AGENT,
    ...(model.provider === 'offline' ? {} : { 'server.address': new URL(model.baseUrl).hostname }),
  };
}
