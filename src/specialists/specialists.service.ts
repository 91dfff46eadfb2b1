import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { assertUnderQuota } from '../common/errors/quota.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { ModelSettingsError, parseModelSettings } from '../llm/model-settings.js';
import { SpecialistEntity } from './entities/specialist.entity.js';
import { AgentRosterService } from './agent-roster.service.js';
import { GENERIC_AGENT, SPECIALIST_NAME } from './specialist-names.js';
import { SpecialistsRepository } from './specialists.repository.js';
import type { DeletedRow } from '../database/delete-except.js';
import { afterCommit } from '../database/transactional-connection.js';
import { modelReferences } from '../tenant-config/config-references.js';
import { TenantConfigPolicy } from '../tenant-config/tenant-config.policy.js';

export class SpecialistInputError extends Error {}

export interface SpecialistChanges {
  name: string;
  role?: string;
  instructions?: string;
  /** Null (or omitted on create): use the assistant's model. */
  model?: unknown;
  tools?: string[];
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

@Injectable()
export class SpecialistsService {
  constructor(
    private readonly repository: SpecialistsRepository,
    private readonly rosters: AgentRosterService,
    private readonly policy: TenantConfigPolicy,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  list(organizationId: string, assistantId: string): Promise<SpecialistEntity[]> {
    return this.repository.listForAssistant(organizationId, assistantId);
  }

  find(
    organizationId: string,
    assistantId: string,
    name: string,
    manager?: EntityManager,
  ): Promise<SpecialistEntity | null> {
    return this.repository.findByName(organizationId, assistantId, name, manager);
  }

  /** `manager` joins the caller's transaction (the admin API's audited delete). */
  async remove(
    organizationId: string,
    assistantId: string,
    name: string,
    manager?: EntityManager,
  ): Promise<boolean> {
    const removed = await this.repository.deleteByName(organizationId, assistantId, name, manager);
    this.forgetRoster(organizationId, assistantId, manager);
    return removed;
  }

  /** Creates or updates the specialist of that name; omitted fields keep their value. */
  async upsert(
    organizationId: string,
    assistantId: string,
    changes: SpecialistChanges,
    manager?: EntityManager,
  ): Promise<{ specialist: SpecialistEntity; action: 'created' | 'updated' | 'unchanged' }> {
    if (!SPECIALIST_NAME.test(changes.name) || changes.name === GENERIC_AGENT) {
      throw new SpecialistInputError(
        'specialist name must be 1-40 lowercase letters, digits or underscores, start with a letter, and not be "generic"',
      );
    }
    const existing = await this.repository.findByName(organizationId, assistantId, changes.name, manager);
    const specialist =
      existing ??
      Object.assign(new SpecialistEntity(), {
        id: randomUUID(),
        organizationId,
        assistantId,
        name: changes.name,
        role: '',
        instructions: '',
        model: null,
        toolNames: [],
        configuredBy: 'platform',
      });
    const before = comparable(specialist);
    if (changes.role !== undefined) specialist.role = changes.role;
    if (changes.instructions !== undefined) specialist.instructions = changes.instructions;
    let author = specialist.configuredBy;
    if (changes.model !== undefined) {
      specialist.model = changes.model === null ? null : parseModel(changes.model);
      // What the model may name and reach, for whoever writes it (TenantConfigPolicy).
      if (specialist.model)
        author = await this.policy.vet(organizationId, modelReferences(specialist.model), manager);
    }
    if (changes.tools !== undefined) specialist.toolNames = parseToolNames(changes.tools);
    if (!specialist.role.trim())
      throw new SpecialistInputError('a specialist needs a role (when to hand over to it)');
    // Settings declared again as they are change nothing, whoever declares them.
    if (existing && comparable(specialist) === before) return { specialist: existing, action: 'unchanged' };
    specialist.configuredBy = author;
    if (!existing) {
      assertUnderQuota(
        await this.repository.countForAssistant(organizationId, assistantId, manager),
        this.config.quotas.specialistsPerAssistant,
        'specialists of one assistant',
        'QUOTA_SPECIALISTS_PER_ASSISTANT',
      );
    }
    const saved = await this.repository.save(specialist, manager);
    this.forgetRoster(organizationId, assistantId, manager);
    return { specialist: saved, action: existing ? 'updated' : 'created' };
  }

  /** `apply --prune`: deletes the assistant's specialists not named in `keep`. */
  async pruneExcept(
    organizationId: string,
    assistantId: string,
    keep: readonly string[],
    manager: EntityManager,
  ): Promise<DeletedRow[]> {
    const deleted = await this.repository.deleteExcept(organizationId, assistantId, keep, manager);
    if (deleted.length > 0) this.forgetRoster(organizationId, assistantId, manager);
    return deleted;
  }

  /** The roster this process caches, forgotten at once and again once `manager`'s transaction commits. */
  private forgetRoster(organizationId: string, assistantId: string, manager?: EntityManager): void {
    this.rosters.invalidate(organizationId, assistantId);
    afterCommit(manager, () => this.rosters.invalidate(organizationId, assistantId));
  }
}

/**
 * The declared fields as canonical JSON (sorted keys, no undefined): a model read back from JSONB
 * has its keys in another order than the same model just parsed, and must still compare equal.
 */
function comparable(specialist: SpecialistEntity): string {
  return JSON.stringify(
    [specialist.role, specialist.instructions, specialist.model, specialist.toolNames],
    (_key, value: unknown) =>
      typeof value === 'object' && value !== null && !Array.isArray(value)
        ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
        : value,
  );
}

function parseModel(model: unknown) {
  try {
    return parseModelSettings(model);
  } catch (error) {
    if (error instanceof ModelSettingsError) throw new SpecialistInputError(error.message);
    throw error;
  }
}

export function parseToolNames(tools: unknown): string[] {
  if (!Array.isArray(tools) || !tools.every((name) => typeof name === 'string' && TOOL_NAME.test(name))) {
    throw new SpecialistInputError('tools must be a list of tool names from the organization catalogue');
  }
  return [...new Set(tools as string[])];
}
