import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { assertUnderQuota } from '../common/errors/quota.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { AssistantTurnCache } from './assistant-turn-cache.js';
import { AssistantsRepository } from './assistants.repository.js';
import { AssistantEntity } from './entities/assistant.entity.js';
import { isUuid } from '../organizations/organizations.service.js';
import { ModelSettingsError, parseModelSettings } from '../llm/model-settings.js';
import type { DeletedRow } from '../database/delete-except.js';
import type { ConfigAuthorKind } from '../tenant-config/config-author.js';
import { modelReferences } from '../tenant-config/config-references.js';
import { TenantConfigPolicy } from '../tenant-config/tenant-config.policy.js';

export class AssistantInputError extends Error {}

export interface AssistantChanges {
  name?: string;
  instructions?: string;
  model?: unknown;
  /** Server-side tools of the generic path, by catalogue name. */
  tools?: string[];
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

@Injectable()
export class AssistantsService {
  constructor(
    private readonly repository: AssistantsRepository,
    private readonly turnCache: AssistantTurnCache,
    private readonly policy: TenantConfigPolicy,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The assistant of this organization, or null; cached briefly because every turn needs it. */
  findForTurn(organizationId: string, id: string): Promise<AssistantEntity | null> {
    return this.turnCache.find(organizationId, id);
  }

  find(organizationId: string, id: string): Promise<AssistantEntity | null> {
    return this.repository.findForOrganization(organizationId, id);
  }

  findByName(organizationId: string, name: string): Promise<AssistantEntity | null> {
    return this.repository.findByNameForOrganization(organizationId, name);
  }

  /** By id (bare or with the `asst_` prefix the API shows) or by unambiguous name. */
  async findByReference(organizationId: string, reference: string): Promise<AssistantEntity | null> {
    const id = reference.startsWith('asst_') ? reference.slice('asst_'.length) : reference;
    return (
      (isUuid(id) ? await this.repository.findForOrganization(organizationId, id.toLowerCase()) : null) ??
      (await this.findUniqueByName(organizationId, reference))
    );
  }

  list(organizationId: string): Promise<AssistantEntity[]> {
    return this.repository.listForOrganization(organizationId);
  }

  /**
   * The organization's one assistant of this name, or null; a name two assistants share
   * identifies neither and is an error. `manager` joins a caller's transaction (`apply`).
   */
  async findUniqueByName(
    organizationId: string,
    name: string,
    manager?: EntityManager,
  ): Promise<AssistantEntity | null> {
    const matches = await this.repository.listByNameForOrganization(organizationId, name.trim(), manager);
    if (matches.length > 1) {
      throw new AssistantInputError(
        `${matches.length} assistants are named "${name.trim()}"; use the assistant's id, or rename all but one`,
      );
    }
    return matches[0] ?? null;
  }

  async create(
    organizationId: string,
    changes: AssistantChanges & { name: string },
  ): Promise<AssistantEntity> {
    await this.assertRoom(organizationId);
    const assistant = this.newAssistant(organizationId, changes);
    assistant.configuredBy = await this.vetModel(assistant);
    return this.repository.save(assistant);
  }

  /** 409 quota_exceeded when the organization has QUOTA_ASSISTANTS_PER_ORGANIZATION assistants. */
  private async assertRoom(organizationId: string, manager?: EntityManager): Promise<void> {
    const quota = this.config.quotas.assistantsPerOrganization;
    if (quota === 0) return;
    const count = await this.repository.countForOrganization(organizationId, manager);
    assertUnderQuota(count, quota, 'assistants', 'QUOTA_ASSISTANTS_PER_ORGANIZATION');
  }

  /**
   * Creates or updates the organization's assistant of this name inside the caller's
   * transaction (the admin `apply`), and says which it did. Fields left undefined keep their
   * value; an assistant already as declared is not written.
   */
  async upsertByName(
    organizationId: string,
    changes: AssistantChanges & { name: string },
    manager: EntityManager,
  ): Promise<{ assistant: AssistantEntity; action: 'created' | 'updated' | 'unchanged' }> {
    const name = changes.name.trim();
    const matches = await this.repository.listByNameForOrganization(organizationId, name, manager);
    if (matches.length > 1) {
      throw new AssistantInputError(
        `${matches.length} assistants are named "${name}"; rename all but one so that the name identifies it`,
      );
    }
    const [existing] = matches;
    if (!existing) {
      await this.assertRoom(organizationId, manager);
      const assistant = this.newAssistant(organizationId, changes);
      assistant.configuredBy = await this.vetModel(assistant, manager);
      return { assistant: await this.repository.save(assistant, manager), action: 'created' };
    }
    const before = comparable(existing);
    this.apply(existing, changes);
    const author = changes.model === undefined ? undefined : await this.vetModel(existing, manager);
    // Settings declared again as they are change nothing, whoever declares them.
    if (comparable(existing) === before) return { assistant: existing, action: 'unchanged' };
    if (author) existing.configuredBy = author;
    const saved = await this.repository.save(existing, manager);
    this.turnCache.forget(organizationId, existing.id, manager);
    return { assistant: saved, action: 'updated' };
  }

  async update(
    organizationId: string,
    id: string,
    changes: AssistantChanges,
  ): Promise<AssistantEntity | null> {
    const assistant = await this.repository.findForOrganization(organizationId, id);
    if (!assistant) return null;
    this.apply(assistant, changes);
    if (changes.model !== undefined) assistant.configuredBy = await this.vetModel(assistant);
    const saved = await this.repository.save(assistant);
    this.turnCache.forget(organizationId, id);
    return saved;
  }

  private newAssistant(
    organizationId: string,
    changes: AssistantChanges & { name: string },
  ): AssistantEntity {
    const assistant = Object.assign(new AssistantEntity(), {
      id: randomUUID(),
      organizationId,
      name: '',
      instructions: '',
      model: undefined,
    });
    this.apply(assistant, { ...changes, model: changes.model ?? { provider: 'offline' } });
    return assistant;
  }

  /** Checks what the model settings name and reach for whoever writes them; returns who that is. */
  private vetModel(assistant: AssistantEntity, manager?: EntityManager): Promise<ConfigAuthorKind> {
    return this.policy.vet(assistant.organizationId, modelReferences(assistant.model), manager);
  }

  private apply(assistant: AssistantEntity, changes: AssistantChanges): void {
    if (changes.name !== undefined) {
      const name = changes.name.trim();
      if (name.length === 0 || name.length > 200)
        throw new AssistantInputError('name must be 1-200 characters');
      assistant.name = name;
    }
    if (changes.instructions !== undefined) assistant.instructions = changes.instructions;
    if (changes.tools !== undefined) {
      if (
        !Array.isArray(changes.tools) ||
        !changes.tools.every((name) => typeof name === 'string' && TOOL_NAME.test(name))
      ) {
        throw new AssistantInputError('tools must be a list of tool names from the organization catalogue');
      }
      assistant.toolNames = [...new Set(changes.tools)];
    }
    if (changes.model !== undefined) {
      try {
        assistant.model = parseModelSettings(changes.model);
      } catch (error) {
        if (error instanceof ModelSettingsError) throw new AssistantInputError(error.message);
        throw error;
      }
    }
  }

  /** `apply --prune`: deletes the organization's assistants not named in `keep`, with their history. */
  async pruneExcept(
    organizationId: string,
    keep: readonly string[],
    manager: EntityManager,
  ): Promise<DeletedRow[]> {
    const deleted = await this.repository.deleteExcept(organizationId, keep, manager);
    for (const { id } of deleted) this.turnCache.forget(organizationId, id, manager);
    return deleted;
  }
}

/** The declared fields as canonical JSON (sorted keys, no undefined), so JSONB read back compares equal. */
function comparable(assistant: AssistantEntity): string {
  return JSON.stringify(
    {
      name: assistant.name,
      instructions: assistant.instructions,
      model: assistant.model,
      tools: assistant.toolNames ?? [],
    },
    (_key, value: unknown) =>
      typeof value === 'object' && value !== null && !Array.isArray(value)
        ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
        : value,
  );
}
