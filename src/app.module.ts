import {
  DynamicModule,
  Inject,
  MiddlewareConsumer,
  Module,
  NestModule,
  RequestMethod,
  ValidationPipe,
} from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import type { NextFunction, Request, Response } from 'express';
import { AdminApiModule } from './admin-api/admin-api.module.js';
import { ApiKeysModule } from './api-keys/api-keys.module.js';
import { AssistantsModule } from './assistants/assistants.module.js';
import { AuthModule } from './auth/auth.module.js';
import { ClaimsModule } from './claims/claims.module.js';
import { AllExceptionsFilter } from './common/errors/all-exceptions.filter.js';
import { ApiError } from './common/errors/error-catalogue.js';
import { requestIdMiddleware } from './common/http/request-id.middleware.js';
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
import { UsageModule } from './usage/usage.module.js';

/** The one validation pipe: DTO failures become 400 invalid_request in the envelope. */
const validationPipe = new ValidationPipe({
  whitelist: true,
  transform: true,
  exceptionFactory: (errors) =>
    new ApiError(
      'invalid_request',
      errors
        .flatMap((error) =>
          Object.values(error.constraints ?? { [error.property]: `${error.property} is invalid` }),
        )
        .join('; '),
    ),
});

/** Express middleware that parses request bodies; createApp builds it from the configuration. */
export type BodyParser = (req: Request, res: Response, next: NextFunction) => void;

const BODY_PARSER = Symbol('BODY_PARSER');

@Module({})
export class AppModule implements NestModule {
  constructor(@Inject(BODY_PARSER) private readonly bodyParser: BodyParser) {}

  static register(config: AppConfig, database: DatabaseHandle, bodyParser: BodyParser): DynamicModule {
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
        UsageModule,
        ConversationsModule,
        McpGatewayModule,
        AdminApiModule,
        OpenApiModule,
      ],
      providers: [
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
        { provide: APP_PIPE, useValue: validationPipe },
        { provide: BODY_PARSER, useValue: bodyParser },
      ],
    };
  }

  /**
   * The request edge, all of it here because the order matters: every request gets its id
   * first (so every answer and log line carries it), then its body, then it is counted for
   * shutdown and observed (metrics, access log, processing time) before the in-flight cap may
   * refuse it, so shed requests show up in both. Errors thrown here reach the global filter.
   */
  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(requestIdMiddleware, this.bodyParser, LifecycleMiddleware, HttpObservabilityMiddleware)
      .forRoutes('*');
    consumer.apply(InFlightMiddleware).forRoutes({ path: 'v1/responses', method: RequestMethod.POST });
  }
}
