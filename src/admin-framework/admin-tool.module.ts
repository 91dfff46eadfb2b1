import { DynamicModule, Module, type Type } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { ConfigModule } from '../config/config.module.js';
import type { EntityList } from '../database/data-source-options.js';
import { DatabaseModule } from '../database/database.module.js';
import type { DatabaseHandle } from '../database/embedded-postgres.js';
import type { AdminCommand } from './admin-command.js';
import { ApplyModule } from './apply/apply.module.js';

/**
 * What a feature adds to the admin tool: its Nest module (the services its commands use, and its
 * `@ApplySectionProvider()` sections, which `apply` discovers) and its commands. src/admin lists
 * the features; this folder never imports one.
 */
export interface AdminFeature {
  module: Type<unknown>;
  commands: readonly AdminCommand[];
}

/** The admin tool as src/admin composes it. */
export interface AdminTool {
  features: readonly AdminFeature[];
  /** Every entity (src/entities.ts): commands read and write any table. */
  entities: EntityList;
}

/** A connection pool this small is plenty for one command, and leaves the service's pool alone. */
const ADMIN_POOL_MAX = 4;

/** What the admin tool runs in: configuration, the database, `apply` and the features. No HTTP server. */
@Module({})
export class AdminToolModule {
  static register(config: AppConfig, database: DatabaseHandle, tool: AdminTool): DynamicModule {
    return {
      module: AdminToolModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule.forRoot(database, Math.min(config.database.poolMax, ADMIN_POOL_MAX), tool.entities),
        ...tool.features.map((feature) => feature.module),
        ApplyModule,
      ],
    };
  }
}
