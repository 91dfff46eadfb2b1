import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { AssistantsRepository } from './assistants.repository.js';
import { AssistantEntity } from './entities/assistant.entity.js';
import { ModelSettingsError, parseModelSettings } from './model-settings.js';

export class AssistantInputError extends Error {}

export interface AssistantChanges {
  name?: string;
  instructions?: string;
  model?: unknown;
}

interface CachedAssistant {
  assistant: AssistantEntity | null;
  expiresAt: number;
}

/** Assistants change rarely; a turn reads one from memory for a few seconds. */
const ASSISTANT_CACHE_TTL_MS = 5_000;

@Injectable()
export class AssistantsService {
  private readonly cache = new Map<string, CachedAssistant>();

  constructor(private readonly repository: AssistantsRepository) {}

  /** The assistant of this organization, or null; cached briefly because every turn needs it. */
  async findForTurn(organizationId: string, id: string): Promise<AssistantEntity | null> {
    const cacheKey = `${organizationId}:${id}`;
    const now = Date.now();
    const cached = this.cache.get(cacheKey);
    if (cached && cached.expiresAt > now) return cached.assistant;
    const assistant = await this.repository.findForOrganization(organizationId, id);
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(cacheKey, { assistant, expiresAt: now + ASSISTANT_CACHE_TTL_MS });
    return assistant;
  }

  find(organizationId: string, id: string): Promise<AssistantEntity | null> {
    return this.repository.findForOrganization(organizationId, id);
  }

  findByName(organizationId: string, name: string): Promise<AssistantEntity | null> {
    return this.repository.findByNameForOrganization(organizationId, name);
  }

  list(organizationId: string): Promise<AssistantEntity[]> {
    return this.repository.listForOrganization(organizationId);
  }

  async create(
    organizationId: string,
    changes: AssistantChanges & { name: string },
  ): Promise<AssistantEntity> {
    const assistant = Object.assign(new AssistantEntity(), {
      id: randomUUID(),
      organizationId,
      name: '',
      instructions: '',
      model: undefined,
    });
    this.apply(assistant, { model: { provider: 'offline' }, ...changes });
    return this.repository.save(assistant);
  }

  async update(
    organizationId: string,
    id: string,
    changes: AssistantChanges,
  ): Promise<AssistantEntity | null> {
    const assistant = await this.repository.findForOrganization(organizationId, id);
    if (!assistant) return null;
    this.apply(assistant, changes);
    this.cache.delete(`${organizationId}:${id}`);
    return this.repository.save(assistant);
  }

  private apply(assistant: AssistantEntity, changes: AssistantChanges): void {
    if (changes.name !== undefined) {
      const name = changes.name.trim();
      if (name.length === 0 || name.length > 200)
        throw new AssistantInputError('name must be 1-200 characters');
      assistant.name = name;
    }
    if (changes.instructions !== undefined) assistant.instructions = changes.instructions;
    if (changes.model !== undefined) {
      try {
        assistant.model = parseModelSettings(changes.model);
      } catch (error) {
        if (error instanceof ModelSettingsError) throw new AssistantInputError(error.message);
        throw error;
      }
    }
  }
}
