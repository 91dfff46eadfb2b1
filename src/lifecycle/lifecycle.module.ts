import { Global, MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { InFlightMiddleware } from '../limits/in-flight.middleware.js';
import { HttpObservabilityMiddleware } from '../metrics/http-observability.middleware.js';
import { LifecycleMiddleware } from './lifecycle.middleware.js';
import { LifecycleState } from './lifecycle.state.js';

@Global()
@Module({
  providers: [LifecycleState],
  exports: [LifecycleState],
})
export class LifecycleModule implements NestModule {
  /**
   * The request edge, registered in one place because the order matters: every request is
   * counted for shutdown and observed (metrics, access log, processing time) before the
   * in-flight cap may refuse it, so shed requests show up in both.
   */
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(LifecycleMiddleware, HttpObservabilityMiddleware).forRoutes('*');
    consumer.apply(InFlightMiddleware).forRoutes({ path: 'v1/responses', method: RequestMethod.POST });
  }
}
