import type { DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '../../migrations/index.js';

/** Every entity class of the service (src/entities.ts). */
export type EntityList = NonNullable<DataSourceOptions['entities']>;

/** One definition of the connection, shared by the service, the admin CLI and migrations. */
export function dataSourceOptions(
  url: string,
  poolMax: number,
  embedded: boolean,
  entities: EntityList,
): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities,
    migrations: MIGRATIONS,
    migrationsTableName: 'schema_migrations',
    synchronize: false,
    migrationsRun: false,
    logging: false,
    // The embedded database runs one statement at a time; a few connections are plenty. Its
    // connections share one session, so one closed when idle would leave its prepared statements
    // behind in it (see prepared-query.ts): they are kept open instead.
    extra: {
      max: embedded ? Math.min(poolMax, 4) : poolMax,
      ...(embedded ? { idleTimeoutMillis: 0 } : {}),
      connectionTimeoutMillis: 5000,
      application_name: 'switchboard',
    },
  };
}
