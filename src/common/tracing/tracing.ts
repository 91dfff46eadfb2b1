import {
  context,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';

/**
 * The service's one door to OpenTelemetry. Tracing is off unless an OTLP endpoint is configured
 * (src/tracing/tracing-sdk.ts turns it on); while off, every helper here returns at its first
 * line, so the turn path pays one boolean test per span and allocates nothing.
 */
let active = false;
let contentCapture = false;
let tracer = trace.getTracer('switchboard');
const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

export function setTracingActive(on: boolean, captureContent = false): void {
  active = on;
  // From the provider registered now: one from an earlier start (a test's app) was shut down.
  if (on) tracer = trace.getTracer('switchboard');
  contentCapture = on && captureContent;
}

export function tracingActive(): boolean {
  return active;
}

/** Whether prompt and completion text may go on spans (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT). */
export function capturesContent(): boolean {
  return contentCapture;
}

/**
 * Runs `work` in a child span of the active one and ends it however `work` ends. A failure marks
 * the span with its error class only: messages may hold user text.
 */
export function inSpan<T>(
  name: string,
  attributes: Attributes,
  work: (span: Span | null) => Promise<T>,
  kind: SpanKind = SpanKind.INTERNAL,
): Promise<T> {
  // Not an async function: while off, `work`'s own promise is returned as it is, without one
  // more promise around it and the ticks it takes to settle (several per turn, before its model call).
  if (!active) {
    try {
      return work(null);
    } catch (error) {
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- what `work` threw, as an async function would reject
      return Promise.reject(error);
    }
  }
  return tracer.startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      markFailed(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Starts a span that the caller ends (for work whose end is an event, such as a request's close). */
export function startSpan(
  name: string,
  attributes: Attributes,
  kind: SpanKind = SpanKind.INTERNAL,
  parent: Context = context.active(),
): Span | null {
  if (!active) return null;
  return tracer.startSpan(name, { kind, attributes }, parent);
}

/** Runs `work` with `span` as the active span, so spans started inside become its children. */
export function withActiveSpan<T>(span: Span | null, work: () => T): T {
  if (span === null) return work();
  return context.with(trace.setSpan(context.active(), span), work);
}

export function markFailed(span: Span | null, error: unknown): void {
  if (span === null) return;
  const type = error instanceof Error ? error.constructor.name : typeof error;
  span.setAttribute('error.type', (error as { code?: unknown })?.code?.toString() ?? type);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/** The trace context of incoming W3C headers (`traceparent`, `tracestate`), for a server span. */
export function extractContext(headers: Readonly<Record<string, string | string[] | undefined>>): Context {
  if (!active) return context.active();
  return propagation.extract(context.active(), headers);
}

/** Headers carrying the active trace to an upstream model, a REST tool or an MCP server. */
export function traceHeaders(): Readonly<Record<string, string>> {
  if (!active) return NO_HEADERS;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

/** The active trace id for log lines; undefined while tracing is off or outside a trace. */
export function currentTraceId(): string | undefined {
  if (!active) return undefined;
  const spanContext = trace.getActiveSpan()?.spanContext();
  return spanContext && trace.isSpanContextValid(spanContext) ? spanContext.traceId : undefined;
}

export { SpanKind };
export type { Span };
