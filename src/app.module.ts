import { DynamicModule, MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { AdminApiModule } from './admin-api/admin-api.module.js';
import { ApiKeysModule } from './api-keys/api-keys.module.js';
import { AssistantsModule } from './assistants/assistants.module.js';
import { ApiKeyGuard } from './auth/api-key.guard.js';
import { AuthModule } from './auth/auth.module.js';
import { HttpEdgeMiddleware, REQUEST_EDGE } from './bootstrap/http-edge.middleware.js';
import { ClaimsModule } from './claims/claims.module.js';
import type { RequestEdge } from './common/http/request-edge.middleware.js';
import { AllExceptionsFilter } from './common/errors/all-exceptions.filter.js';
import { ApiValidationPipe } from './common/validation/validation.pipe.js';
import type { AppConfig } from './config/app-config.js';
import { ConfigModule } from './config/config.module.js';
import { ConsoleModule } from './console/console.module.js';
import { ConversationsModule } from './conversations/conversations.module.js';
import { DatabaseModule } from './database/database.module.js';
import type { DatabaseHandle } from './database/embedded-postgres.js';
import { ENTITIES } from './entities.js';
import { HealthModule } from './health/health.module.js';
import { LifecycleModule } from './lifecycle/lifecycle.module.js';
import { InFlightMiddleware } from './limits/in-flight.middleware.js';
import { LimitsModule } from './limits/limits.module.js';
import { RateLimitGuard } from './limits/rate-limit.guard.js';
import { McpGatewayModule } from './mcp-gateway/mcp-gateway.module.js';
import { FilesModule } from './files/files.module.js';
import { VectorStoresModule } from './vector-stores/vector-stores.module.js';
import { MemoryModule } from './memory/memory.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { OpenApiModule } from './openapi/openapi.module.js';
import { OrganizationsModule } from './organizations/organizations.module.js';
import { QuickstartModule } from './quickstart/quickstart.module.js';
import { ResponsesModule } from './responses/responses.module.js';
import { UsageModule } from './usage/usage.module.js';
import { UsersAdminModule } from './users/admin/users-admin.module.js';

@Module({})
export class AppModule implements NestModule {
  static register(config: AppConfig, database: DatabaseHandle, edge: RequestEdge): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot(database, config.database.poolMax, ENTITIES, { maintain: true }),
        // First of the modules with controllers: Nest registers routes in module order, and Express
        // tests each route layer in turn, so the turn routes match before the ~80 others
        // (test/route-order.e2e-spec.ts).
        ResponsesModule,
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
        FilesModule,
        VectorStoresModule,
        UsageModule,
        ConversationsModule,
        McpGatewayModule,
        AdminApiModule,
        UsersAdminModule,
        OpenApiModule,
        ConsoleModule,
      ],
      providers: [
        // Global guards run in this order: the API key names the organization, whose rate limit
        // is then counted (a refused key uses none of its quota).
        { provide: APP_GUARD, useExisting: ApiKeyGuard },
        { provide: APP_GUARD, useExisting: RateLimitGuard },
        { provide: APP_FILTER, useClass: AllExceptionsFilter },
        { provide: APP_PIPE, useClass: ApiValidationPipe },
        { provide: REQUEST_EDGE, useValue: edge },
      ],
    };
  }

  /**
   * The request edge, one middleware (src/bootstrap/http-edge.middleware.ts, which fixes its
   * order): id, trace span, target/header/body checks, shutdown count and observation; then the
   * in-flight cap may refuse a response request, so shed requests show up in metrics and logs.
   * Errors thrown here reach the global filter.
   */
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(HttpEdgeMiddleware).forRoutes('*');
    consumer.apply(InFlightMiddleware).forRoutes({ path: 'v1/responses', method: RequestMethod.POST });
  }
}
