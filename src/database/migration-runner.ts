import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';

/** Any fixed 64-bit number shared by every replica: "switchboard" migrations. */
const MIGRATION_LOCK_KEY = 7_340_027_113_001;

/**
 * Applies pending migrations while holding a PostgreSQL advisory lock, so replicas that start
 * at once migrate the schema exactly once: the first takes the lock and migrates, the others
 * wait for it, then find nothing pending.
 */
export async function runMigrationsLocked(dataSource: DataSource): Promise<string[]> {
  const lock = dataSource.createQueryRunner();
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      const applied = await dataSource.runMigrations({ transaction: 'each' });
      const names = applied.map((migration) => migration.name);
      if (names.length > 0) new Logger('Migrations').log({ msg: 'applied migrations', migrations: names });
      return names;
    } finally {
      await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await lock.release();
  }
}

/** True when every migration the code knows has been applied. */
export async function migrationsAreCurrent(dataSource: DataSource): Promise<boolean> {
  return !(await dataSource.showMigrations());
}
