import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database/data-source-options.js';
import { openDatabase } from '../../src/database/embedded-postgres.js';
import { runMigrationsLocked } from '../../src/database/migration-runner.js';
import { ENTITIES } from '../../src/entities.js';
import { createTestDatabase } from './test-database.js';

export interface TestDataSource {
  dataSource: DataSource;
  close(): Promise<void>;
}

/**
 * A migrated database of its own behind a TypeORM DataSource, without the application: for
 * repository tests that call the SQL directly. Embedded (a copy of the migrated template) unless
 * DATABASE_URL names a server, like the rest of the suite.
 */
export async function openTestDataSource(): Promise<TestDataSource> {
  const database = await createTestDatabase();
  const handle = await openDatabase({
    url: database.url,
    embeddedDataDir: database.env.EMBEDDED_DATA_DIR ?? '',
    role: 'cli',
  });
  const dataSource = new DataSource(dataSourceOptions(handle.url, 4, handle.embedded, ENTITIES));
  await dataSource.initialize();
  // A server's fresh database is empty; the embedded template is already migrated (a no-op).
  await runMigrationsLocked(dataSource);
  return {
    dataSource,
    close: async () => {
      await dataSource.destroy();
      await handle.close();
      await database.drop();
    },
  };
}
