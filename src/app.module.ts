import { DynamicModule, Inject, MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import type { RequestHandler } from 'express';
import { ApiKeysModule } from './api-keys/api-keys.module.js';
import { AssistantsModule } from './assistants/assistants.module.js';
import { AuthModule } from './auth/auth.module.js';
import { ClaimsModule } from './claims/claims.module.js';
import { AllExceptionsFilter } from './common/errors/all-exceptions.filter.js';
import { requestIdMiddleware } from './common/http/request-id.middleware.js';
import { ApiValidationPipe } from './common/validation/validation.pipe.js';
import { httpTracingMiddleware } from './common/tracing/http-tracing.middleware.js';
import type { AppConfig } from './config/app-config.js';
import { ConfigModule } from './config/config.module.js';
import { ConversationsModule } from './conversations/conversations.module.js';
import { DatabaseModule } from './database/database.module.js';
import type { DatabaseHandle } from './database/embedded-postgres.js';
import { ENTITIES } from './entities.js';
import { HealthModule } from './health/health.module.js';
import { LifecycleMiddleware } from './lifecycle/lifecycle.middleware.js';
import { LifecycleModule } from './lifecycle/lifecycle.module.js';
import { InFlightMiddleware } from './limits/in-flight.middleware.js';
import { LimitsModule } from './limits/limits.module.js';
import { McpGatewayModule } from './mcp-gateway/mcp-gateway.module.js';
import { MemoryModule } from './memory/memory.module.js';
import { HttpObservabilityMiddleware } from './metrics/http-observability.middleware.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { OpenApiModule } from './openapi/openapi.module.js';
import { OrganizationsModule } from './organizations/organizations.module.js';
import { QuickstartModule } from './quickstart/quickstart.module.js';
import { ResponsesModule } from './responses/responses.module.js';

/**
 * The request target's and headers' text rule, then the JSON body and its text rule
 * (src/common/http/request-edge.middleware.ts); createApp builds it from the configuration.
 */
export type RequestEdge = RequestHandler[];

const REQUEST_EDGE = Symbol('REQUEST_EDGE');

@Module({})
export class AppModule implements NestModule {
  constructor(@Inject(REQUEST_EDGE) private readonly edge: RequestEdge) {}

  static register(config: AppConfig, database: DatabaseHandle, edge: RequestEdge): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot(database, config.database.poolMax, ENTITIES),
        LifecycleModule,
        MetricsModule,
        LimitsModule,
        HealthModule,
        OrganizationsModule,
        ApiKeysModule,
        AssistantsModule,
        AuthModule,
        QuickstartModule,
        ClaimsModule,
        MemoryModule,
        ResponsesModule,
        ConversationsModule,
        McpGatewayModule,
        OpenApiModule,
      ],
      providers: [
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
        { provide: APP_PIPE, useClass: ApiValidationPipe },
        { provide: REQUEST_EDGE, useValue: edge },
      ],
    };
  }

  /**
   * The request edge, all of it here because the order matters: every request gets its id
   * first (so every answer and log line carries it), then its trace span (when tracing is on), then its body, then it is counted for
   * shutdown and observed (metrics, access log, processing time) before the in-flight cap may
   * refuse it, so shed requests show up in both. Errors thrown here reach the global filter.
   */
  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(
        requestIdMiddleware,
        httpTracingMiddleware,
        ...this.edge,
        LifecycleMiddleware,
        HttpObservabilityMiddleware,
      )
      .forRoutes('*');
    consumer.apply(InFlightMiddleware).forRoutes({ path: 'v1/responses', method: RequestMethod.POST });
  }
}
