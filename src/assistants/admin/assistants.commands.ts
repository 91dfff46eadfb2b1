import { fallbacksText } from '../../llm/upstream-targets.js';
import {
  AdminUsageError,
  parseId,
  stringOption,
  type AdminCommand,
} from '../../admin-framework/admin-command.js';
import {
  ORGANIZATION_OPTION,
  organizationOf,
  organizationListCommand,
  organizationRowCommand,
} from '../../organizations/admin/organizations.commands.js';
import { AssistantsService, type AssistantChanges } from '../assistants.service.js';
import type { AssistantEntity } from '../entities/assistant.entity.js';
import { AGENT_OPTIONS, instructionsFrom, modelFrom, toolsFrom, toolsText } from './agent-options.js';

/** `assistants <verb> <assistantId> --org`: a command on one assistant of the organization. */
const assistantCommand = organizationRowCommand('<assistantId>', async (organization, ref, app) => {
  const id = parseId(ref, 'the assistant id', 'asst_');
  const assistant = await app.get(AssistantsService).find(organization.id, id);
  if (!assistant) throw new AdminUsageError(`organization ${organization.slug} has no assistant ${id}`);
  return assistant;
});

function describe(assistant: AssistantEntity): string {
  const model = assistant.model;
  const upstream =
    model.provider === 'offline'
      ? 'offline model'
      : `${model.model} at ${model.baseUrl} (key in ${model.apiKeyEnv ?? 'no variable'})${fallbacksText(model)}`;
  return [
    `assistant ${assistant.name}`,
    `  id:               ${assistant.id}`,
    `  organization:     ${assistant.organizationId}`,
    `  model:            ${upstream}`,
    `  function calling: ${model.functionCalling ? 'yes' : 'no'}`,
    `  tools:            ${toolsText(assistant.toolNames)}`,
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
      ...AGENT_OPTIONS,
    },
    async run(context) {
      const organization = await organizationOf(context);
      const changes: AssistantChanges & { name: string } = {
        name: stringOption(context.options, 'name') ?? '',
        instructions: await instructionsFrom(context),
        tools: toolsFrom(context.options),
      };
      const model = await modelFrom(context);
      if (model !== undefined) changes.model = model;
      const assistant = await context.app.get(AssistantsService).create(organization.id, changes);
      return { json: assistantView(assistant), text: `Created ${describe(assistant)}` };
    },
  },
  organizationListCommand({
    words: ['assistants', 'list'],
    summary: "list an organization's assistants",
    list: (app, organizationId) => app.get(AssistantsService).list(organizationId),
    view: assistantView,
    columns: ['ID', 'NAME', 'PROVIDER', 'MODEL', 'TOOLS', 'UPDATED'],
    cells: (a) => [
      a.id,
      a.name,
      a.model.provider,
      a.model.provider === 'offline' ? '-' : a.model.model,
      a.toolNames.length > 0 ? a.toolNames.join(',') : '-',
      a.updatedAt.toISOString(),
    ],
  }),
  assistantCommand({
    words: ['assistants', 'show'],
    summary: 'show one assistant',
    run(assistant) {
      return { json: assistantView(assistant), text: describe(assistant) };
    },
  }),
  assistantCommand({
    words: ['assistants', 'update'],
    summary: 'change the name, instructions, model settings or tools of an assistant',
    options: {
      name: { type: 'string', placeholder: '<name>', description: 'display name' },
      ...AGENT_OPTIONS,
    },
    async run(current, context) {
      const changes: AssistantChanges = {
        name: stringOption(context.options, 'name'),
        instructions: await instructionsFrom(context),
        model: await modelFrom(context, current.model),
        tools: toolsFrom(context.options),
      };
      const updated = await context.app
        .get(AssistantsService)
        .update(current.organizationId, current.id, changes);
      if (!updated) throw new AdminUsageError(`assistant ${current.id} disappeared while being updated`);
      return { json: assistantView(updated), text: `Updated ${describe(updated)}` };
    },
  }),
];

/** The `--json` shape, field by field so that a new column is never printed by accident. */
export function assistantView(assistant: AssistantEntity) {
  return {
    id: assistant.id,
    organizationId: assistant.organizationId,
    name: assistant.name,
    instructions: assistant.instructions,
    model: assistant.model,
    tools: assistant.toolNames,
    createdAt: assistant.createdAt.toISOString(),
    updatedAt: assistant.updatedAt.toISOString(),
  };
}
