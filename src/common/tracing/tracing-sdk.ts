import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { TracingConfig } from '../../config/app-config.js';
import { setTracingActive } from './tracing.js';

export interface TracingHandle {
  /** Exports what is buffered and turns tracing off again. */
  shutdown(): Promise<void>;
}

/**
 * Registers the OpenTelemetry SDK for this process when the configuration asks for it: W3C trace
 * context in and out, OTLP/HTTP export in batches off the request path. Null when tracing is off,
 * in which case nothing is registered and the API stays a no-op.
 */
export function startTracing(config: TracingConfig, serviceVersion: string): TracingHandle | null {
  if (!config.enabled || config.endpoint === undefined) return null;
  const exporterOptions = { url: config.endpoint, headers: config.headers };
  const exporter =
    config.protocol === 'http/json'
      ? new OtlpJsonExporter(exporterOptions)
      : new OtlpProtobufExporter(exporterOptions);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: config.serviceName,
      [ATTR_SERVICE_VERSION]: serviceVersion,
    }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.sampleRatio) }),
    spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: 1000 })],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  setTracingActive(true, config.captureContent);
  return {
    async shutdown() {
      setTracingActive(false);
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}
