import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { INestApplicationContext } from '@nestjs/common';
import { UUID } from '../common/http/request-params.js';

/** A mistake in how the command was typed or in a value given to it; printed without a stack. */
export class AdminUsageError extends Error {}

export interface AdminOption {
  type: 'string' | 'boolean';
  description: string;
  /** One-letter alias, e.g. `f` for `--file`. */
  short?: string;
  /** Shown in the usage line, e.g. `<slug|id>`. */
  placeholder?: string;
  required?: boolean;
}

export type OptionValues = Readonly<Record<string, string | boolean | undefined>>;

export interface CommandContext {
  app: INestApplicationContext;
  options: OptionValues;
  /** Positional arguments after the command words, as many as the command declares. */
  args: readonly string[];
  /** Where relative file paths given on the command line are resolved. */
  cwd: string;
}

/** What a command prints: `json` with `--json`, `text` otherwise. */
export interface CommandOutput {
  json: unknown;
  text: string;
}

export interface AdminCommand {
  /** The words that select it, e.g. `['orgs', 'create']`. */
  words: readonly string[];
  summary: string;
  /** Names of the positional arguments, e.g. `['<slug|id>', '<n|default>']`. */
  args?: readonly string[];
  options?: Readonly<Record<string, AdminOption>>;
  run(context: CommandContext): Promise<CommandOutput>;
}

export function stringOption(options: OptionValues, name: string): string | undefined {
  const value = options[name];
  return typeof value === 'string' ? value : undefined;
}

/** A whole number option or argument; `what` names it in the error. */
export function parseWholeNumber(value: string, what: string): number {
  if (!/^\d+$/.test(value)) throw new AdminUsageError(`${what} must be a whole number (got "${value}")`);
  return Number(value);
}

export function parseBoolean(value: string, what: string): boolean {
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new AdminUsageError(`${what} must be true or false (got "${value}")`);
}

/** Accepts an id bare or with the prefix the API shows (`asst_<uuid>`). */
export function parseId(value: string, what: string, prefix?: string): string {
  const id = prefix && value.startsWith(prefix) ? value.slice(prefix.length) : value;
  if (!UUID.test(id)) throw new AdminUsageError(`${what} must be a UUID (got "${value}")`);
  return id.toLowerCase();
}

/** At most one of the named options; returns the name of the one given. */
export function oneOf(options: OptionValues, names: readonly string[]): string | undefined {
  const given = names.filter((name) => options[name] !== undefined);
  if (given.length > 1) throw new AdminUsageError(`use only one of ${given.map((n) => `--${n}`).join(', ')}`);
  return given[0];
}

export async function readTextFile(cwd: string, path: string): Promise<string> {
  try {
    return await readFile(resolve(cwd, path), 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new AdminUsageError(
      `cannot read ${path}${code === 'ENOENT' ? ': no such file' : typeof code === 'string' ? ` (${code})` : ''}`,
    );
  }
}
