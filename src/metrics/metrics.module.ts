import { Global, Module } from '@nestjs/common';
import { HttpObservability } from './http-observability.js';
import { MetricsController } from './metrics.controller.js';
import { MetricsTokenGuard } from './metrics-token.guard.js';
import { Metrics } from './metrics.service.js';

/** HttpObservability is driven by the app's edge middleware, which fixes the order of the edge. */
@Global()
@Module({
  controllers: [MetricsController],
  providers: [Metrics, MetricsTokenGuard, HttpObservability],
  exports: [Metrics, HttpObservability],
})
export class MetricsModule {}
