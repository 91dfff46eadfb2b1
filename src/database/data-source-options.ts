import type { DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '../../migrations/index.js';
import { ENTITIES } from './entities.js';

/** One definition of the connection, shared by the service, the admin CLI and migrations. */
export function dataSourceOptions(url: string, poolMax: number, embedded: boolean): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    synchronize: false,
    migrationsRun: false,
    logging: false,
    // The embedded database runs one statement at a time; a few connections are plenty.
    extra: {
      max: embedded ? Math.min(poolMax, 4) : poolMax,
      connectionTimeoutMillis: 5000,
      application_name: 'switchboard',
    },
  };
}
