import 'reflect-metadata';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { getDataSourceToken } from '@nestjs/typeorm';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { loadConfig, type AppConfig } from '../config/app-config.js';
import { openDatabase } from '../database/embedded-postgres.js';
import { runMigrationsLocked } from '../database/migration-runner.js';
import { AdminUsageError, type AdminCommand, type OptionValues } from './admin-command.js';
import { AdminToolModule, type AdminTool } from './admin-tool.module.js';
import { applyCommand } from './apply/apply.command.js';
import { runAudited } from './audit/cli-audit.js';

/** Runs one command; see createAdminRunner. */
export type AdminRunner = (
  argv: readonly string[],
  io: AdminIo,
  env?: Readonly<Record<string, string | undefined>>,
) => Promise<number>;

export interface AdminOutput {
  write(chunk: string): unknown;
}

export interface AdminIo {
  stdout: AdminOutput;
  stderr: AdminOutput;
}

interface Invocation {
  command: AdminCommand;
  options: OptionValues;
  args: string[];
  help: boolean;
}

/**
 * The admin tool made of `tool.features` (their commands, then `apply`). The runner it returns
 * runs one command and returns its exit code: 0 on success, 1 on any error (reported on stderr,
 * as JSON with `--json`, never with a stack). `env` replaces the process environment, so tests
 * point the tool at their own database.
 */
export function createAdminRunner(tool: AdminTool): AdminRunner {
  const commands = [...tool.features.flatMap((feature) => feature.commands), applyCommand];
  return (argv, io, env = process.env) => runAdmin(commands, tool, argv, io, env);
}

async function runAdmin(
  commands: readonly AdminCommand[],
  tool: AdminTool,
  argv: readonly string[],
  io: AdminIo,
  env: Readonly<Record<string, string | undefined>>,
): Promise<number> {
  const json = argv.includes('--json');
  if (argv.length === 0 || ['help', '--help', '-h'].includes(argv[0])) {
    io.stdout.write(usage(commands));
    return 0;
  }
  let session: AdminSession | undefined;
  try {
    const invocation = parseInvocation(commands, argv);
    if (invocation.help) {
      io.stdout.write(commandHelp(invocation.command));
      return 0;
    }
    session = await openSession(tool, loadConfig(env), (waitingFor) => {
      if (!json) io.stderr.write(`The embedded database is held by ${waitingFor}; waiting for it…\n`);
    });
    if (session.migrations.length > 0 && !json) {
      io.stderr.write(`Applied migrations: ${session.migrations.join(', ')}\n`);
    }
    const { command, options, args } = invocation;
    const app = session.app;
    const output = await runAudited(app, { words: command.words, options, args }, () =>
      command.run({
        app,
        options,
        args,
        cwd: env.INIT_CWD ?? process.cwd(), // npm runs scripts in the package root; paths are the user's
      }),
    );
    io.stdout.write(json ? `${JSON.stringify(output.json, null, 2)}\n` : `${output.text}\n`);
    return 0;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    io.stderr.write(json ? `${JSON.stringify({ error: { message } })}\n` : `error: ${message}\n`);
    return 1;
  } finally {
    await session?.close().catch((error: unknown) => {
      // The command's work is done (or reported); only say that the cleanup failed.
      io.stderr.write(`warning: could not close the database: ${(error as Error).message}\n`);
    });
  }
}

function parseInvocation(commands: readonly AdminCommand[], argv: readonly string[]): Invocation {
  const command = commands.find((candidate) => candidate.words.every((word, index) => argv[index] === word));
  if (!command) {
    const known = [...new Set(commands.map((c) => c.words[0]))].join(', ');
    throw new AdminUsageError(
      `unknown command "${argv.slice(0, 2).join(' ')}" (commands: ${known}; try help)`,
    );
  }
  const declared = command.options ?? {};
  const options: NonNullable<ParseArgsConfig['options']> = {
    json: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  };
  for (const [name, option] of Object.entries(declared)) {
    options[name] = option.short ? { type: option.type, short: option.short } : { type: option.type };
  }
  let parsed: { values: OptionValues; positionals: string[] };
  try {
    parsed = parseArgs({
      args: argv.slice(command.words.length),
      options,
      allowPositionals: true,
      strict: true,
    }) as { values: OptionValues; positionals: string[] };
  } catch (error) {
    throw new AdminUsageError(
      `${(error as Error).message}\nusage: npx switchboard-admin ${commandUsage(command)}`,
    );
  }
  const { values, positionals } = parsed;
  const help = values.help === true;
  if (!help) {
    const missing = Object.entries(declared).filter(
      ([name, option]) => option.required && values[name] === undefined,
    );
    if (missing.length > 0) {
      throw new AdminUsageError(
        `missing ${missing.map(([name]) => `--${name}`).join(', ')}\nusage: npx switchboard-admin ${commandUsage(command)}`,
      );
    }
    const expected = command.args?.length ?? 0;
    if (positionals.length !== expected) {
      throw new AdminUsageError(
        `expected ${expected === 0 ? 'no' : expected} argument${expected === 1 ? '' : 's'}, got ${positionals.length}\nusage: npx switchboard-admin ${commandUsage(command)}`,
      );
    }
  }
  return { command, options: values, args: positionals, help };
}

function commandUsage(command: AdminCommand): string {
  const options = Object.entries(command.options ?? {}).map(([name, option]) => {
    const flag = option.short ? `-${option.short}` : `--${name}`;
    const text = option.type === 'boolean' ? flag : `${flag} ${option.placeholder ?? '<value>'}`;
    return option.required ? text : `[${text}]`;
  });
  return [...command.words, ...options, ...(command.args ?? []), '[--json]'].join(' ');
}

function commandHelp(command: AdminCommand): string {
  const lines = [`usage: npx switchboard-admin ${commandUsage(command)}`, '', command.summary, ''];
  for (const [name, option] of Object.entries(command.options ?? {})) {
    const flag = option.short ? `-${option.short}, --${name}` : `--${name}`;
    lines.push(`  ${flag.padEnd(22)} ${option.description}${option.required ? ' (required)' : ''}`);
  }
  lines.push(`  ${'--json'.padEnd(22)} machine-readable output`, '');
  return lines.join('\n');
}

function usage(commands: readonly AdminCommand[]): string {
  const lines = [
    'usage: npx switchboard-admin <command> [options] [--json]',
    '       npx switchboard-admin <command> --help   (the options of one command)',
    '',
    'commands:',
  ];
  for (const command of commands) {
    lines.push(`  ${command.words.join(' ').padEnd(24)} ${command.summary}`);
  }
  lines.push(
    '',
    'Every command accepts --json for machine-readable output; errors go to stderr with exit code 1.',
    'The database is DATABASE_URL, or the embedded one in EMBEDDED_DATA_DIR (through the running',
    'service when there is one). See docs/admin-cli.md.',
    '',
  );
  return lines.join('\n');
}

interface AdminSession {
  app: INestApplicationContext;
  /** Migrations this run applied (the schema is brought up to date before any command). */
  migrations: string[];
  close(): Promise<void>;
}

/**
 * Fails at once when the database cannot be reached: the service's connection retries (about
 * 30 seconds, for a database still starting) would only make a mistyped URL hang the command.
 */
async function assertReachable(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
  } catch (error) {
    throw new AdminUsageError(`cannot connect to the database: ${(error as Error).message}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function openSession(
  tool: AdminTool,
  config: AppConfig,
  onWait: (waitingFor: string) => void,
): Promise<AdminSession> {
  const database = await openDatabase({ ...config.database, role: 'cli', onWait });
  let app: INestApplicationContext | undefined;
  try {
    await assertReachable(database.url);
    app = await NestFactory.createApplicationContext(AdminToolModule.register(config, database, tool), {
      logger: false,
      abortOnError: false,
    });
    const migrations = await runMigrationsLocked(app.get<DataSource>(getDataSourceToken()));
    const context = app;
    return {
      app,
      migrations,
      close: async () => {
        await context.close();
        await database.close();
      },
    };
  } catch (error) {
    await app?.close().catch(() => undefined);
    await database.close();
    throw error;
  }
}
