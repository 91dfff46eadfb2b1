import { parse as parseYaml } from 'yaml';
import { AssistantsService, type AssistantChanges } from '../../assistants/assistants.service.js';
import type { AssistantEntity } from '../../assistants/entities/assistant.entity.js';
import type { ModelSettings } from '../../assistants/model-settings.js';
import {
  AdminUsageError,
  oneOf,
  parseBoolean,
  parseId,
  readTextFile,
  stringOption,
  type AdminCommand,
  type AdminOption,
  type CommandContext,
} from '../admin-command.js';
import { assistantView, table } from '../admin-views.js';
import { ORGANIZATION_OPTION, requireOrganization } from './organizations.commands.js';

/** Flag → ModelSettings field, for the flags that set one field each. */
const MODEL_FLAGS = {
  provider: { field: 'provider', description: 'openai-compatible or offline' },
  'base-url': { field: 'baseUrl', description: 'upstream base URL, e.g. https://api.openai.com/v1' },
  model: { field: 'model', description: 'upstream model name' },
  'api-key-env': { field: 'apiKeyEnv', description: 'environment variable holding the upstream key' },
  'function-calling': { field: 'functionCalling', description: 'true or false: the model can call tools' },
  'timeout-seconds': { field: 'timeoutSeconds', description: 'upstream timeout for this assistant' },
} as const;

const MODEL_OPTIONS: Record<string, AdminOption> = {
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

const TEXT_OPTIONS: Record<string, AdminOption> = {
  instructions: { type: 'string', placeholder: '<text>', description: 'system instructions' },
  'instructions-file': {
    type: 'string',
    placeholder: '<path>',
    description: 'read the instructions from a file',
  },
};

async function instructionsFrom({ options, cwd }: CommandContext): Promise<string | undefined> {
  const given = oneOf(options, ['instructions', 'instructions-file']);
  if (given === 'instructions-file') return readTextFile(cwd, stringOption(options, given) ?? '');
  return stringOption(options, 'instructions');
}

/**
 * The model settings the flags describe, starting from `current` (an update keeps what the flags
 * do not mention, unless the provider changes). Undefined when no model flag was given.
 * AssistantsService validates the result.
 */
async function modelFrom({ options, cwd }: CommandContext, current?: ModelSettings): Promise<unknown> {
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
    return parseStructured(await readTextFile(cwd, path), path);
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

function parseStructured(text: string, path: string): unknown {
  try {
    return parseYaml(text) as unknown;
  } catch (error) {
    throw new AdminUsageError(
      `${path} is not valid JSON or YAML: ${(error as Error).message.split('\n')[0]}`,
    );
  }
}

async function requireAssistant(context: CommandContext): Promise<AssistantEntity> {
  const organization = await requireOrganization(context.app, stringOption(context.options, 'org') ?? '');
  const id = parseId(context.args[0], 'the assistant id', 'asst_');
  const assistant = await context.app.get(AssistantsService).find(organization.id, id);
  if (!assistant) throw new AdminUsageError(`organization ${organization.slug} has no assistant ${id}`);
  return assistant;
}

function describe(assistant: AssistantEntity): string {
  const model = assistant.model;
  const upstream =
    model.provider === 'offline'
      ? 'offline model'
      : `${model.model} at ${model.baseUrl} (key in ${model.apiKeyEnv ?? 'no variable'})`;
  return [
    `assistant ${assistant.name}`,
    `  id:               ${assistant.id}`,
    `  organization:     ${assistant.organizationId}`,
    `  model:            ${upstream}`,
    `  function calling: ${model.functionCalling ? 'yes' : 'no'}`,
    `  updated:          ${assistant.updatedAt.toISOString()}`,
    `  instructions:     ${assistant.instructions.length > 0 ? assistant.instructions : '(none)'}`,
  ].join('\n');
}

export const assistantCommands: AdminCommand[] = [
  {
    words: ['assistants', 'create'],
    summary: 'create an assistant (the offline model unless model flags say otherwise)',
    options: {
      ...ORGANIZATION_OPTION,
      name: { type: 'string', placeholder: '<name>', required: true, description: 'display name' },
      ...TEXT_OPTIONS,
      ...MODEL_OPTIONS,
    },
    async run(context) {
      const organization = await requireOrganization(context.app, stringOption(context.options, 'org') ?? '');
      const changes: AssistantChanges & { name: string } = {
        name: stringOption(context.options, 'name') ?? '',
        instructions: await instructionsFrom(context),
      };
      const model = await modelFrom(context);
      if (model !== undefined) changes.model = model;
      const assistant = await context.app.get(AssistantsService).create(organization.id, changes);
      return { json: assistantView(assistant), text: `Created ${describe(assistant)}` };
    },
  },
  {
    words: ['assistants', 'list'],
    summary: "list an organization's assistants",
    options: { ...ORGANIZATION_OPTION },
    async run({ app, options }) {
      const organization = await requireOrganization(app, stringOption(options, 'org') ?? '');
      const assistants = await app.get(AssistantsService).list(organization.id);
      return {
        json: assistants.map(assistantView),
        text: table(
          ['ID', 'NAME', 'PROVIDER', 'MODEL', 'UPDATED'],
          assistants.map((a) => [
            a.id,
            a.name,
            a.model.provider,
            a.model.provider === 'offline' ? '-' : a.model.model,
            a.updatedAt.toISOString(),
          ]),
        ),
      };
    },
  },
  {
    words: ['assistants', 'show'],
    summary: 'show one assistant',
    args: ['<assistantId>'],
    options: { ...ORGANIZATION_OPTION },
    async run(context) {
      const assistant = await requireAssistant(context);
      return { json: assistantView(assistant), text: describe(assistant) };
    },
  },
  {
    words: ['assistants', 'update'],
    summary: 'change the name, instructions or model settings of an assistant',
    args: ['<assistantId>'],
    options: {
      ...ORGANIZATION_OPTION,
      name: { type: 'string', placeholder: '<name>', description: 'display name' },
      ...TEXT_OPTIONS,
      ...MODEL_OPTIONS,
    },
    async run(context) {
      const current = await requireAssistant(context);
      const changes: AssistantChanges = {
        name: stringOption(context.options, 'name'),
        instructions: await instructionsFrom(context),
        model: await modelFrom(context, current.model),
      };
      const updated = await context.app
        .get(AssistantsService)
        .update(current.organizationId, current.id, changes);
      if (!updated) throw new AdminUsageError(`assistant ${current.id} disappeared while being updated`);
      return { json: assistantView(updated), text: `Updated ${describe(updated)}` };
    },
  },
];
