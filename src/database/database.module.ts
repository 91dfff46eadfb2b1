import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { dataSourceOptions, type EntityList } from './data-source-options.js';
import { DatabaseOutageProbe } from './database-outage.probe.js';
import type { DatabaseHandle } from './embedded-postgres.js';
import { SchemaReadiness } from './schema-readiness.js';
import { TransactionalConnection } from './transactional-connection.js';

@Module({})
export class DatabaseModule {
  /** The database is located before Nest starts (see bootstrap); this only connects to it. */
  static forRoot(database: DatabaseHandle, poolMax: number, entities: EntityList): DynamicModule {
    return {
      module: DatabaseModule,
      // Every feature's repositories use the connection (and its transactions).
      global: true,
      providers: [TransactionalConnection, DatabaseOutageProbe, SchemaReadiness],
      exports: [TransactionalConnection, SchemaReadiness],
      imports: [TypeOrmModule.forRoot(dataSourceOptions(database.url, poolMax, database.embedded, entities))],
    };
  }
}
