import { loadYamlParser } from '../yaml-parser.js';

/** The parsed configuration file: an object whose keys sections claim. */
export type ApplyDocument = Readonly<Record<string, unknown>>;

/** A mistake in the configuration file; the message starts with where it is. */
export class ApplyError extends Error {}

/** One object of a list in the document, with its path for error messages. */
export interface DocumentEntry {
  /** e.g. `organizations[1].assistants[0]` */
  path: string;
  value: Readonly<Record<string, unknown>>;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Parses a `.json` file as JSON and anything else as YAML (which also reads JSON). The YAML parser
 * is loaded by the first apply, not with the service; a failure to load it is not the file's.
 */
export async function parseApplyDocument(text: string, fileName: string): Promise<ApplyDocument> {
  const yaml = fileName.toLowerCase().endsWith('.json') ? undefined : await loadYamlParser();
  let parsed: unknown;
  try {
    parsed = yaml ? (yaml.parse(text) as unknown) : JSON.parse(text);
  } catch (error) {
    throw new ApplyError(`${fileName} could not be parsed: ${(error as Error).message.split('\n')[0]}`);
  }
  if (!isObject(parsed)) throw new ApplyError(`${fileName} must hold an object (e.g. organizations: [...])`);
  return parsed;
}

/** The document itself as an entry, to read its top-level lists with `entriesAt`. */
export function rootEntry(document: ApplyDocument): DocumentEntry {
  return { path: '', value: document };
}

/** The objects listed under `key` of `parent`; none when the key is absent. */
export function entriesAt({ path, value }: DocumentEntry, key: string): DocumentEntry[] {
  const listPath = path ? `${path}.${key}` : key;
  const list = value[key];
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new ApplyError(`${listPath} must be a list`);
  return list.map((item: unknown, index) => {
    if (!isObject(item)) throw new ApplyError(`${listPath}[${index}] must be an object`);
    return { path: `${listPath}[${index}]`, value: item };
  });
}

export function requiredString(entry: DocumentEntry, key: string): string {
  const value = entry.value[key];
  if (typeof value !== 'string' || value.trim().length === 0) {
    throw new ApplyError(`${entry.path}.${key} is required and must be a non-empty string`);
  }
  return value;
}

export function optionalString(entry: DocumentEntry, key: string): string | undefined {
  const value = entry.value[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new ApplyError(`${entry.path}.${key} must be a string`);
  return value;
}

/** Undefined when absent, null when explicitly null. */
export function optionalNullableInteger(entry: DocumentEntry, key: string): number | null | undefined {
  const value = entry.value[key];
  if (value === undefined || value === null) return value;
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw new ApplyError(`${entry.path}.${key} must be a whole number or null`);
  }
  return value;
}

/** A list of strings (e.g. tool names); undefined when absent. */
export function optionalStringList(entry: DocumentEntry, key: string): string[] | undefined {
  const value = entry.value[key];
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((item): item is string => typeof item === 'string')) {
    throw new ApplyError(`${entry.path}.${key} must be a list of strings`);
  }
  return value;
}

/** Fails on the first name that appears twice among `entries` (compared as `keyOf` returns). */
export function assertUnique(
  entries: readonly DocumentEntry[],
  field: string,
  keyOf: (e: DocumentEntry) => string,
) {
  const seen = new Map<string, string>();
  for (const entry of entries) {
    const key = keyOf(entry);
    const first = seen.get(key);
    if (first) throw new ApplyError(`${entry.path}.${field} "${key}" is already declared at ${first}`);
    seen.set(key, entry.path);
  }
}

/**
 * Paths of keys that no section claims, in objects where sections claim keys. `claimed` holds
 * paths such as `organizations[].assistants`; objects below the claimed paths (a model's
 * settings) are validated by their own section instead.
 */
export function unclaimedKeys(document: ApplyDocument, claimed: ReadonlySet<string>): string[] {
  const found: string[] = [];
  const walk = (value: unknown, pattern: string, shown: string): void => {
    if (Array.isArray(value)) {
      value.forEach((item: unknown, index) => walk(item, `${pattern}[]`, `${shown}[${index}]`));
      return;
    }
    if (!isObject(value)) return;
    const prefix = pattern ? `${pattern}.` : '';
    if (![...claimed].some((path) => path.startsWith(prefix))) return;
    for (const [key, child] of Object.entries(value)) {
      const childPattern = `${prefix}${key}`;
      const childShown = shown ? `${shown}.${key}` : key;
      if (claimed.has(childPattern)) walk(child, childPattern, childShown);
      else found.push(childShown);
    }
  };
  walk(document, '', '');
  return found;
}
