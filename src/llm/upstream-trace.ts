import { trace, type Attributes } from '@opentelemetry/api';
import { tracingActive } from '../common/tracing/tracing.js';
import type { UpstreamCallLog } from './llm.types.js';

/**
 * What a model call's targets did, on its active (`chat`) span: who answered, every attempt
 * (`model@host:outcome:duration`), and the targets that were cooling down when it started.
 */
export function upstreamSpanAttributes(log: UpstreamCallLog): void {
  if (!tracingActive()) return;
  const span = trace.getActiveSpan();
  if (!span) return;
  const attributes: Attributes = {
    'switchboard.upstream.attempts': log.attempts.map(
      (attempt) => `${attempt.target}:${attempt.outcome}:${attempt.durationMs}ms`,
    ),
  };
  if (log.answeredBy) {
    attributes['switchboard.upstream.answered_by'] = log.answeredBy.target;
    attributes['gen_ai.response.model'] = log.answeredBy.model;
  }
  if (log.cooling) attributes['switchboard.upstream.cooling_down'] = log.cooling;
  span.setAttributes(attributes);
}
