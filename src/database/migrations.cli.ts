/**
 * `npm run migration:run | migration:revert | migration:show | migration:generate -- <Name>`.
 * Works against DATABASE_URL, or the embedded database when it is unset. `generate` diffs the
 * entities against a scratch embedded database migrated to the current head, so it needs no server.
 */
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DataSource } from 'typeorm';
import { loadConfig } from '../config/app-config.js';
import { ENTITIES } from '../entities.js';
import { dataSourceOptions } from './data-source-options.js';
import { EmbeddedPostgres, openDatabase } from './embedded-postgres.js';
import { runMigrationsLocked } from './migration-runner.js';

async function withDataSource<T>(
  url: string,
  embedded: boolean,
  work: (ds: DataSource) => Promise<T>,
): Promise<T> {
  const dataSource = new DataSource(dataSourceOptions(url, 2, embedded, ENTITIES));
  await dataSource.initialize();
  try {
    return await work(dataSource);
  } finally {
    await dataSource.destroy();
  }
}

async function generate(name: string): Promise<void> {
  if (!/^[A-Z][A-Za-z0-9]*$/.test(name)) throw new Error('Migration name must be PascalCase, e.g. AddClaims');
  const scratch = await mkdtemp(join(tmpdir(), 'switchboard-generate-'));
  const embedded = await EmbeddedPostgres.start(join(scratch, 'data'));
  try {
    const { up, down } = await withDataSource(embedded.url, true, async (ds) => {
      await ds.runMigrations();
      const sql = await ds.driver.createSchemaBuilder().log();
      return { up: sql.upQueries, down: sql.downQueries.reverse() };
    });
    if (up.length === 0) {
      console.log('No changes: the entities match the migrations.');
      return;
    }
    const timestamp = Date.now();
    const kebab = name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
    const file = resolve('migrations', `${timestamp}-${kebab}.ts`);
    const line = (q: { query: string; parameters?: unknown[] }) =>
      `    await queryRunner.query(${JSON.stringify(q.query)}${q.parameters?.length ? `, ${JSON.stringify(q.parameters)}` : ''});`;
    await writeFile(
      file,
      `import type { MigrationInterface, QueryRunner } from 'typeorm';\n\n` +
        `export class ${name}${timestamp} implements MigrationInterface {\n` +
        `  name = '${name}${timestamp}';\n\n` +
        `  async up(queryRunner: QueryRunner): Promise<void> {\n${up.map(line).join('\n')}\n  }\n\n` +
        `  async down(queryRunner: QueryRunner): Promise<void> {\n${down.map(line).join('\n')}\n  }\n}\n`,
    );
    const index = resolve('migrations', 'index.ts');
    const source = await readFile(index, 'utf8');
    const importLine = `import { ${name}${timestamp} } from './${timestamp}-${kebab}.js';\n`;
    const updated = source
      .replace(/^((?:import .*\n)*)/, `$1${importLine}`)
      .replace(
        /\[([^\]]*)\];/,
        (_m, list: string) =>
          `[${list.trim() ? `${list.trim().replace(/,$/, '')}, ` : ''}${name}${timestamp}];`,
      );
    await writeFile(index, updated);
    console.log(`Wrote ${file}; review it before committing.`);
  } finally {
    await embedded.stop();
    await rm(scratch, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  // The command prints its own one-line result; the runner's service log line would repeat it.
  Logger.overrideLogger(false);
  const [command, name] = process.argv.slice(2);
  if (command === 'generate') return generate(name ?? '');
  const config = loadConfig();
  const database = await openDatabase({ ...config.database, role: 'cli' });
  try {
    await withDataSource(database.url, database.embedded, async (ds) => {
      if (command === 'run') {
        const applied = await runMigrationsLocked(ds);
        console.log(applied.length ? `Applied: ${applied.join(', ')}` : 'Nothing to apply.');
      } else if (command === 'revert') {
        await ds.undoLastMigration({ transaction: 'all' });
        console.log('Reverted the last migration.');
      } else if (command === 'show') {
        const pending = await ds.showMigrations();
        console.log(pending ? 'There are pending migrations.' : 'Schema is up to date.');
      } else {
        throw new Error('usage: migrations.cli (run | revert | show | generate <Name>)');
      }
    });
  } finally {
    await database.close();
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
