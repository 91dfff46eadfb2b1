import { Global, Module } from '@nestjs/common';
import { CapacityGauges } from './capacity-gauges.js';
import { HttpObservability } from './http-observability.js';
import { MetricsController } from './metrics.controller.js';
import { MetricsTokenGuard } from './metrics-token.guard.js';
import { Metrics } from './metrics.service.js';
import { LlmModule } from '../llm/llm.module.js';
import { UpstreamBreakerGauge } from './upstream-breaker-gauge.js';

/** HttpObservability is driven by the app's edge middleware, which fixes the order of the edge. */
@Global()
@Module({
  controllers: [MetricsController],
  imports: [LlmModule],
  providers: [Metrics, CapacityGauges, MetricsTokenGuard, HttpObservability, UpstreamBreakerGauge],
  exports: [Metrics, HttpObservability],
})
export class MetricsModule {}
