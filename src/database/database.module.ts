import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { dataSourceOptions, type EntityList } from './data-source-options.js';
import { DatabaseOutageProbe } from './database-outage.probe.js';
import { EmbeddedMaintenance } from './embedded-maintenance.service.js';
import type { DatabaseHandle } from './embedded-postgres.js';
import { SchemaReadiness } from './schema-readiness.js';
import { TableMaintenance } from './table-maintenance.repository.js';
import { TransactionalConnection } from './transactional-connection.js';

@Module({})
export class DatabaseModule {
  /**
   * The database is located before Nest starts (see bootstrap); this only connects to it. With
   * `maintain` (the service), the process that opened an embedded database also stands in for
   * its missing autovacuum (EmbeddedMaintenance); a PostgreSQL server has its own.
   */
  static forRoot(
    database: DatabaseHandle,
    poolMax: number,
    entities: EntityList,
    options: { maintain?: boolean } = {},
  ): DynamicModule {
    const maintenance =
      options.maintain && database.embedded && database.thread ? [TableMaintenance, EmbeddedMaintenance] : [];
    return {
      module: DatabaseModule,
      // Every feature's repositories use the connection (and its transactions).
      global: true,
      providers: [TransactionalConnection, DatabaseOutageProbe, SchemaReadiness, ...maintenance],
      exports: [TransactionalConnection, SchemaReadiness],
      imports: [TypeOrmModule.forRoot(dataSourceOptions(database.url, poolMax, database.embedded, entities))],
    };
  }
}
