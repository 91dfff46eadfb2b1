/**
 * Options shared by the commands that configure an agent (an assistant's generic path, a
 * specialist): instructions, model settings and server-side tools.
 */
import type { ModelSettings } from '../../llm/model-settings.js';
import {
  AdminUsageError,
  oneOf,
  parseBoolean,
  readTextFile,
  stringOption,
  type AdminOption,
  type CommandContext,
  type OptionValues,
} from '../../admin-framework/admin-command.js';
import { loadYamlParser } from '../../admin-framework/yaml-parser.js';

/** Flag → ModelSettings field, for the flags that set one field each. */
const MODEL_FLAGS = {
  provider: { field: 'provider', description: 'openai-compatible or offline' },
  'base-url': { field: 'baseUrl', description: 'upstream base URL, e.g. https://api.openai.com/v1' },
  model: { field: 'model', description: 'upstream model name' },
  'api-key-env': { field: 'apiKeyEnv', description: 'environment variable holding the upstream key' },
  'function-calling': { field: 'functionCalling', description: 'true or false: the model can call tools' },
  'timeout-seconds': { field: 'timeoutSeconds', description: 'upstream timeout for this assistant' },
} as const;

export const MODEL_OPTIONS: Record<string, AdminOption> = {
  ...Object.fromEntries(
    Object.entries(MODEL_FLAGS).map(([flag, { description }]) => [
      flag,
      { type: 'string', placeholder: '<value>', description } satisfies AdminOption,
    ]),
  ),
  'model-json': { type: 'string', placeholder: '<json>', description: 'the full model settings as JSON' },
  'model-file': {
    type: 'string',
    placeholder: '<path>',
    description: 'the full model settings, JSON or YAML',
  },
};

export const TEXT_OPTIONS: Record<string, AdminOption> = {
  instructions: { type: 'string', placeholder: '<text>', description: 'system instructions' },
  'instructions-file': {
    type: 'string',
    placeholder: '<path>',
    description: 'read the instructions from a file',
  },
};

export async function instructionsFrom({ options, cwd }: CommandContext): Promise<string | undefined> {
  const given = oneOf(options, ['instructions', 'instructions-file']);
  if (given === 'instructions-file') return readTextFile(cwd, stringOption(options, given) ?? '');
  return stringOption(options, 'instructions');
}

/**
 * The model settings the flags describe, starting from `current` (an update keeps what the flags
 * do not mention, unless the provider changes). Undefined when no model flag was given.
 * AssistantsService validates the result.
 */
export async function modelFrom({ options, cwd }: CommandContext, current?: ModelSettings): Promise<unknown> {
  const fieldFlags = Object.keys(MODEL_FLAGS).filter((flag) => options[flag] !== undefined);
  const whole = oneOf(options, ['model-json', 'model-file']);
  if (whole && fieldFlags.length > 0) {
    throw new AdminUsageError(
      `--${whole} replaces the whole model; do not combine it with --${fieldFlags[0]}`,
    );
  }
  if (whole === 'model-json') return parseJson(stringOption(options, whole) ?? '', '--model-json');
  if (whole === 'model-file') {
    const path = stringOption(options, whole) ?? '';
    return await parseStructured(await readTextFile(cwd, path), path);
  }
  if (fieldFlags.length === 0) return undefined;

  // An upstream URL or model name only makes sense for an OpenAI-compatible upstream.
  const impliesUpstream = options['base-url'] !== undefined || options.model !== undefined;
  const provider =
    stringOption(options, 'provider') ??
    (impliesUpstream ? 'openai-compatible' : (current?.provider ?? 'offline'));
  const settings: Record<string, unknown> = current?.provider === provider ? { ...current } : { provider };
  for (const flag of fieldFlags) {
    const value = stringOption(options, flag) ?? '';
    const { field } = MODEL_FLAGS[flag as keyof typeof MODEL_FLAGS];
    if (field === 'functionCalling') settings[field] = parseBoolean(value, `--${flag}`);
    else if (field === 'timeoutSeconds')
      settings[field] = Number.isNaN(Number(value)) ? value : Number(value);
    else settings[field] = value;
  }
  return settings;
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new AdminUsageError(`${what} is not valid JSON`);
  }
}

/** JSON or YAML; a failure to load the YAML parser is the tool's (loadYamlParser), not the file's. */
async function parseStructured(text: string, path: string): Promise<unknown> {
  const yaml = await loadYamlParser();
  try {
    return yaml.parse(text) as unknown;
  } catch (error) {
    throw new AdminUsageError(
      `${path} is not valid JSON or YAML: ${(error as Error).message.split('\n')[0]}`,
    );
  }
}

export const TOOLS_OPTION: Record<string, AdminOption> = {
  tools: {
    type: 'string',
    placeholder: '<name,name…>',
    description: 'server-side tools from the organization catalogue, comma-separated; "" for none',
  },
};

/** The tool names `--tools` gives (the whole list, replacing the current one); undefined without it. */
export function toolsFrom(options: OptionValues): string[] | undefined {
  const value = stringOption(options, 'tools');
  if (value === undefined) return undefined;
  return value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name.length > 0);
}

/** A tool list for human output. */
export function toolsText(toolNames: readonly string[] | undefined): string {
  return toolNames && toolNames.length > 0 ? toolNames.join(', ') : '(none)';
}

/**
 * The options of a command that configures an agent's settings whole: instructions, model, tools.
 * (`specialists set` spreads the three itself, to put `--inherit-model` beside the model flags.)
 */
export const AGENT_OPTIONS: Record<string, AdminOption> = {
  ...TEXT_OPTIONS,
  ...MODEL_OPTIONS,
  ...TOOLS_OPTION,
};
