import type { Attributes } from '@opentelemetry/api';
import type { ModelTool } from '../llm/llm.types.js';
import type { AgentProfile, AgentRoster } from '../specialists/agent-roster.service.js';
import { GENERIC_AGENT } from '../specialists/specialist-names.js';
import { parseArguments } from './server-tool-calls.js';

export const HANDOVER_PREFIX = 'transfer_to_';

/** `transfer_to_<name>` for every other agent of the assistant, the generic path included. */
export function handoverDefinitions(roster: AgentRoster, current: AgentProfile): ModelTool[] {
  if (roster.specialists.size === 0) return [];
  const targets = [roster.generic, ...roster.specialists.values()].filter(
    (agent) => agent.name !== current.name,
  );
  return targets.map((target) => ({
    name: `${HANDOVER_PREFIX}${target.name ?? GENERIC_AGENT}`,
    description: `Hand the conversation over to ${target.name ?? 'the general assistant'}: ${target.role}`,
    parameters: {
      type: 'object',
      properties: { reason: { type: 'string', description: 'Why this agent should take over' } },
      required: ['reason'],
    },
  }));
}

export function handoverTarget(roster: AgentRoster, toolName: string): AgentProfile | undefined {
  const name = toolName.slice(HANDOVER_PREFIX.length);
  return name === GENERIC_AGENT ? roster.generic : roster.specialists.get(name);
}

export function handoverReason(raw: string): string {
  const reason = parseArguments(raw)?.reason;
  return typeof reason === 'string' ? reason : '';
}

export function handoverAttributes(from: AgentProfile, to: AgentProfile): Attributes {
  return {
    'switchboard.handover.from': from.name ?? GENERIC_AGENT,
    'switchboard.handover.to': to.name ?? GENERIC_AGENT,
  };
}
