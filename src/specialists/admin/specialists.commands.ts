import { fallbacksText } from '../../llm/upstream-targets.js';
import type { INestApplicationContext } from '@nestjs/common';
import {
  AdminUsageError,
  stringOption,
  type AdminCommand,
  type CommandContext,
} from '../../admin-framework/admin-command.js';
import { table } from '../../admin-framework/admin-views.js';
import {
  instructionsFrom,
  MODEL_OPTIONS,
  modelFrom,
  TEXT_OPTIONS,
  TOOLS_OPTION,
  toolsFrom,
  toolsText,
} from '../../assistants/admin/agent-options.js';
import { ORGANIZATION_OPTION, organizationOf } from '../../organizations/admin/organizations.commands.js';
import { AssistantsService } from '../../assistants/assistants.service.js';
import type { AssistantEntity } from '../../assistants/entities/assistant.entity.js';
import type { ModelSettings } from '../../llm/model-settings.js';
import type { SpecialistEntity } from '../entities/specialist.entity.js';
import { SpecialistsService } from '../specialists.service.js';

/** The `--json` shape. `model` is null when the specialist uses its assistant's model. */
export function specialistView(specialist: SpecialistEntity) {
  return {
    id: specialist.id,
    organizationId: specialist.organizationId,
    assistantId: specialist.assistantId,
    name: specialist.name,
    role: specialist.role,
    instructions: specialist.instructions,
    model: specialist.model,
    tools: specialist.toolNames,
    createdAt: specialist.createdAt.toISOString(),
    updatedAt: specialist.updatedAt.toISOString(),
  };
}

const ASSISTANT_OPTION = {
  assistant: {
    type: 'string',
    placeholder: '<id|name>',
    required: true,
    description: 'the assistant, by id (the asst_ prefix is accepted) or by name',
  },
} as const;

const NAME_OPTION = {
  name: {
    type: 'string',
    placeholder: '<name>',
    required: true,
    description: 'the specialist: lowercase letters, digits, _ (the model sees transfer_to_<name>)',
  },
} as const;

/** The organization's assistant the administrator names by id or by (unambiguous) name. */
async function requireAssistant(app: INestApplicationContext, options: CommandContext['options']) {
  const organization = await organizationOf({ app, options });
  const reference = stringOption(options, 'assistant') ?? '';
  const assistant = await app.get(AssistantsService).findByReference(organization.id, reference);
  if (!assistant) {
    throw new AdminUsageError(`organization ${organization.slug} has no assistant "${reference}"`);
  }
  return assistant;
}

function modelText(model: ModelSettings): string {
  return model.provider === 'offline'
    ? 'offline model'
    : `${model.model} at ${model.baseUrl}${fallbacksText(model)}`;
}

function describe(specialist: SpecialistEntity, assistant: AssistantEntity): string {
  return [
    `specialist ${specialist.name} of assistant ${assistant.name}`,
    `  id:           ${specialist.id}`,
    `  assistant:    ${assistant.id}`,
    `  role:         ${specialist.role}`,
    `  model:        ${specialist.model ? modelText(specialist.model) : `the assistant's (${modelText(assistant.model)})`}`,
    `  tools:        ${toolsText(specialist.toolNames)}`,
    `  updated:      ${specialist.updatedAt.toISOString()}`,
    `  instructions: ${specialist.instructions.length > 0 ? specialist.instructions : '(none)'}`,
  ].join('\n');
}

/**
 * The model `set` writes: null with --inherit-model; the flags' settings, which start from the
 * specialist's own model or else the assistant's (so `--model gpt-4o` keeps the assistant's
 * upstream and key); undefined (keep) without model flags.
 */
async function specialistModel(
  context: CommandContext,
  current: SpecialistEntity | null,
  assistant: AssistantEntity,
): Promise<unknown> {
  if (context.options['inherit-model'] === true) {
    const conflicting = Object.keys(MODEL_OPTIONS).find((flag) => context.options[flag] !== undefined);
    if (conflicting) throw new AdminUsageError(`--inherit-model cannot be combined with --${conflicting}`);
    return null;
  }
  return modelFrom(context, current?.model ?? assistant.model);
}

export const specialistCommands: AdminCommand[] = [
  {
    words: ['specialists', 'list'],
    summary: "list an assistant's specialist agents",
    options: { ...ORGANIZATION_OPTION, ...ASSISTANT_OPTION },
    async run({ app, options }) {
      const assistant = await requireAssistant(app, options);
      const specialists = await app.get(SpecialistsService).list(assistant.organizationId, assistant.id);
      return {
        json: specialists.map(specialistView),
        text: table(
          ['NAME', 'ROLE', 'MODEL', 'TOOLS', 'UPDATED'],
          specialists.map((s) => [
            s.name,
            s.role,
            s.model ? modelText(s.model) : "assistant's",
            s.toolNames.length > 0 ? s.toolNames.join(',') : '-',
            s.updatedAt.toISOString(),
          ]),
        ),
      };
    },
  },
  {
    words: ['specialists', 'set'],
    summary: 'create a specialist, or change what the flags say of an existing one',
    options: {
      ...ORGANIZATION_OPTION,
      ...ASSISTANT_OPTION,
      ...NAME_OPTION,
      role: {
        type: 'string',
        placeholder: '<text>',
        description: 'when to hand over to it, as the other agents read it (required to create)',
      },
      ...TEXT_OPTIONS,
      ...MODEL_OPTIONS,
      'inherit-model': { type: 'boolean', description: "use the assistant's model (the default)" },
      ...TOOLS_OPTION,
    },
    async run(context) {
      const assistant = await requireAssistant(context.app, context.options);
      const specialists = context.app.get(SpecialistsService);
      const name = stringOption(context.options, 'name') ?? '';
      const current = await specialists.find(assistant.organizationId, assistant.id, name);
      const { specialist, action } = await specialists.upsert(assistant.organizationId, assistant.id, {
        name,
        role: stringOption(context.options, 'role'),
        instructions: await instructionsFrom(context),
        model: await specialistModel(context, current, assistant),
        tools: toolsFrom(context.options),
      });
      const verb = { created: 'Created', updated: 'Updated', unchanged: 'Unchanged' }[action];
      return {
        json: { ...specialistView(specialist), action },
        text: `${verb} ${describe(specialist, assistant)}`,
      };
    },
  },
  {
    words: ['specialists', 'delete'],
    summary: 'delete a specialist; conversations it was handling continue on the generic path',
    options: { ...ORGANIZATION_OPTION, ...ASSISTANT_OPTION, ...NAME_OPTION },
    async run({ app, options }) {
      const assistant = await requireAssistant(app, options);
      const specialists = app.get(SpecialistsService);
      const name = stringOption(options, 'name') ?? '';
      const specialist = await specialists.find(assistant.organizationId, assistant.id, name);
      if (!specialist || !(await specialists.remove(assistant.organizationId, assistant.id, name))) {
        throw new AdminUsageError(`assistant ${assistant.name} has no specialist "${name}"`);
      }
      return {
        json: { ...specialistView(specialist), deleted: true },
        text: `Deleted specialist ${specialist.name} (id ${specialist.id}) of assistant ${assistant.name}.`,
      };
    },
  },
];
