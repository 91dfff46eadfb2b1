import { Global, Module } from '@nestjs/common';
import { MetricsController } from './metrics.controller.js';
import { MetricsTokenGuard } from './metrics-token.guard.js';
import { Metrics } from './metrics.service.js';

/** The HTTP middleware of this folder is applied by LifecycleModule, which fixes the order. */
@Global()
@Module({
  controllers: [MetricsController],
  providers: [Metrics, MetricsTokenGuard],
  exports: [Metrics],
})
export class MetricsModule {}
