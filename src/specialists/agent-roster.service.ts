import { Injectable } from '@nestjs/common';
import { SharedLoads } from '../common/cache/shared-loads.js';
import type { AssistantEntity } from '../assistants/entities/assistant.entity.js';
import type { ModelSettings } from '../llm/model-settings.js';
import type { ConfigAuthorKind } from '../tenant-config/config-author.js';
import { SpecialistsRepository } from './specialists.repository.js';

/** One agent of an assistant, as a turn needs it. */
export interface AgentProfile {
  /** Null for the generic path. */
  name: string | null;
  role: string;
  instructions: string;
  model: ModelSettings;
  /** Who wrote `model`: what it may read and reach when it runs depends on it. */
  modelConfiguredBy: ConfigAuthorKind;
  toolNames: string[];
}

export interface AgentRoster {
  generic: AgentProfile;
  /** Shared by every turn of the assistant while its cache entry lives: never changed. */
  specialists: ReadonlyMap<string, AgentProfile>;
}

/** An assistant's specialists as loaded, by name, kept for a few seconds. */
interface CachedSpecialists {
  specialists: ReadonlyMap<string, AgentProfile>;
  expiresAt: number;
}

const ROSTER_CACHE_TTL_MS = 5_000;

/**
 * The generic path and the specialists of an assistant. Configuration changes rarely and every
 * turn needs it, so it is kept in memory for a few seconds like the assistant itself.
 */
@Injectable()
export class AgentRosterService {
  private readonly cache = new Map<string, CachedSpecialists>();
  private readonly loads = new SharedLoads<CachedSpecialists>();

  constructor(private readonly repository: SpecialistsRepository) {}

  /** Forgets an assistant's specialists in this process (other replicas within the TTL). */
  invalidate(organizationId: string, assistantId: string): void {
    this.cache.delete(`${organizationId}:${assistantId}`);
    this.loads.forget(`${organizationId}:${assistantId}`);
  }

  async forAssistant(assistant: AssistantEntity): Promise<AgentRoster> {
    const key = `${assistant.organizationId}:${assistant.id}`;
    const now = Date.now();
    let cached = this.cache.get(key);
    if (!cached || cached.expiresAt <= now) {
      cached = await this.loads.run(
        key,
        async () => ({
          // By name, built once per load rather than once per turn.
          specialists: new Map(
            (await this.repository.listForAssistant(assistant.organizationId, assistant.id)).map((row) => [
              row.name,
              {
                name: row.name,
                role: row.role,
                instructions: row.instructions,
                model: row.model ?? assistant.model,
                modelConfiguredBy: row.model ? row.configuredBy : assistant.configuredBy,
                toolNames: row.toolNames,
              },
            ]),
          ),
          expiresAt: now + ROSTER_CACHE_TTL_MS,
        }),
        (loaded) => {
          if (this.cache.size > 10_000) this.cache.clear();
          this.cache.set(key, loaded);
        },
      );
    }
    return {
      generic: {
        name: null,
        role: 'The general assistant',
        instructions: assistant.instructions,
        model: assistant.model,
        modelConfiguredBy: assistant.configuredBy,
        toolNames: assistant.toolNames ?? [],
      },
      specialists: cached.specialists,
    };
  }
}
