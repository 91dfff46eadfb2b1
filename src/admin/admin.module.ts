import { DynamicModule, Module } from '@nestjs/common';
import { ApiKeysModule } from '../api-keys/api-keys.module.js';
import { AssistantsModule } from '../assistants/assistants.module.js';
import type { AppConfig } from '../config/app-config.js';
import { ConfigModule } from '../config/config.module.js';
import { DatabaseModule } from '../database/database.module.js';
import type { DatabaseHandle } from '../database/embedded-postgres.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { SpecialistsModule } from '../specialists/specialists.module.js';
import { ToolsModule } from '../tools/tools.module.js';
import { McpGatewaysModule } from '../mcp-gateway/mcp-gateways.module.js';
import { UsersModule } from '../users/users.module.js';
import { ApplyModule } from './apply/apply.module.js';

/** A connection pool this small is plenty for one command, and leaves the service's pool alone. */
const ADMIN_POOL_MAX = 4;

/**
 * What the admin command-line tool needs: configuration, the database and the services it
 * drives. No HTTP server, no quickstart seeding. A module whose resources `apply` should know
 * is imported here (its ApplySection providers are then discovered).
 */
@Module({})
export class AdminModule {
  static register(config: AppConfig, database: DatabaseHandle): DynamicModule {
    return {
      module: AdminModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot(database, Math.min(config.database.poolMax, ADMIN_POOL_MAX)),
        OrganizationsModule,
        ApiKeysModule,
        AssistantsModule,
        SpecialistsModule,
        ToolsModule,
        McpGatewaysModule,
        UsersModule,
        ApplyModule,
      ],
    };
  }
}
