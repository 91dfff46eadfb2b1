import { Injectable } from '@nestjs/common';
import { AssistantsService } from '../assistants/assistants.service.js';
import type { ModelSettings } from '../llm/model-settings.js';
import { UpstreamBreakers, type BreakerTarget } from '../llm/upstream-breakers.js';
import { upstreamTargets } from '../llm/upstream-targets.js';
import { SpecialistsService } from '../specialists/specialists.service.js';
import { ApiError } from '../common/errors/error-catalogue.js';
import { parsePrefixedUuid } from '../common/http/request-params.js';
import { UpstreamAttemptsRepository } from './upstream-attempts.repository.js';
import type { AdminCaller } from './admin-caller.js';
import { AdminScope } from './admin-scope.service.js';

/** One upstream target of an assistant or specialist, with its circuit breaker. */
export interface UpstreamTargetHealth {
  assistantId: string;
  /** The specialist whose model this is; null for the assistant's own. */
  specialist: string | null;
  /** Position in the declared order (0: the settings' own baseUrl/model). */
  index: number;
  target: string;
  model: string;
  baseUrl: string;
  state: 'closed' | 'open' | 'half_open';
  /** Failed calls in a row (forgotten after a quiet minute). */
  consecutiveFailures: number;
  /** Milliseconds left of an open breaker's cooldown; 0 otherwise. */
  cooldownRemainingMs: number;
}

/**
 * The circuit breakers of an organization's upstream targets (docs/resilience.md): every target
 * of its assistants and specialists, read where the breakers live (Redis, else this replica).
 * Breakers are kept per organization, so an organization sees only its own targets' state.
 */
@Injectable()
export class AdminUpstreamHealthService {
  constructor(
    private readonly scope: AdminScope,
    private readonly assistants: AssistantsService,
    private readonly specialists: SpecialistsService,
    private readonly breakers: UpstreamBreakers,
    private readonly attempts: UpstreamAttemptsRepository,
  ) {}

  /** The upstream targets a stored turn tried, in order, the answering one marked. */
  async responseAttempts(caller: AdminCaller, ref: string, id: string) {
    const organization = await this.scope.organization(caller, ref);
    const uuid = parsePrefixedUuid(id, 'resp_', true);
    const found = uuid ? await this.attempts.findForResponse(organization.id, uuid) : null;
    if (!found) throw new ApiError('response_not_found', `No response ${id}`);
    return { object: 'list', response_status: found.status, data: found.attempts };
  }

  async list(caller: AdminCaller, ref: string): Promise<UpstreamTargetHealth[]> {
    const organization = await this.scope.organization(caller, ref);
    const rows: Omit<UpstreamTargetHealth, 'state' | 'consecutiveFailures' | 'cooldownRemainingMs'>[] = [];
    const breakers: BreakerTarget[] = [];
    const add = (assistantId: string, specialist: string | null, model: ModelSettings | null) => {
      if (model?.provider !== 'openai-compatible') return;
      for (const target of upstreamTargets(model)) {
        const { baseUrl, model: name, apiKeyEnv } = target.settings;
        rows.push({
          assistantId,
          specialist,
          index: target.index,
          target: target.label,
          model: name,
          baseUrl,
        });
        breakers.push({ scope: organization.id, baseUrl, model: name, apiKeyEnv, label: target.label });
      }
    };
    for (const assistant of await this.assistants.list(organization.id)) {
      add(assistant.id, null, assistant.model);
      for (const specialist of await this.specialists.list(organization.id, assistant.id)) {
        add(assistant.id, specialist.name, specialist.model);
      }
    }
    const readings = await this.breakers.read(breakers);
    return rows.map((row, index) => ({
      ...row,
      state: readings[index].state,
      consecutiveFailures: readings[index].failures,
      cooldownRemainingMs: readings[index].openForMs,
    }));
  }
}
