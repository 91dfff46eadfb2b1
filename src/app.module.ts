import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { ApiKeysModule } from './api-keys/api-keys.module.js';
import { AssistantsModule } from './assistants/assistants.module.js';
import { AuthModule } from './auth/auth.module.js';
import { ClaimsModule } from './claims/claims.module.js';
import { AllExceptionsFilter } from './common/errors/all-exceptions.filter.js';
import { ApiValidationPipe } from './common/validation/validation.pipe.js';
import type { AppConfig } from './config/app-config.js';
import { ConfigModule } from './config/config.module.js';
import { ConversationsModule } from './conversations/conversations.module.js';
import { DatabaseModule } from './database/database.module.js';
import type { DatabaseHandle } from './database/embedded-postgres.js';
import { HealthModule } from './health/health.module.js';
import { LifecycleModule } from './lifecycle/lifecycle.module.js';
import { LimitsModule } from './limits/limits.module.js';
import { McpGatewayModule } from './mcp-gateway/mcp-gateway.module.js';
import { MemoryModule } from './memory/memory.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { OpenApiModule } from './openapi/openapi.module.js';
import { OrganizationsModule } from './organizations/organizations.module.js';
import { QuickstartModule } from './quickstart/quickstart.module.js';
import { ResponsesModule } from './responses/responses.module.js';

@Module({})
export class AppModule {
  static register(config: AppConfig, database: DatabaseHandle): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot(database, config.database.poolMax),
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
      ],
    };
  }
}
