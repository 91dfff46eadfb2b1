import { Global, Module } from '@nestjs/common';
import { MetricsController } from './metrics.controller.js';
import { MetricsTokenGuard } from './metrics-token.guard.js';
import { Metrics } from './metrics.service.js';

/** The HTTP middleware of this folder is applied by AppModule, which fixes the order of the edge. */
@Global()
@Module({
  controllers: [MetricsController],
  providers: [Metrics, MetricsTokenGuard],
  exports: [Metrics],
})
export class MetricsModule {}
