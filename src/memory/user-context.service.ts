import { Injectable } from '@nestjs/common';
import { UserContextRepository } from './user-context.repository.js';

/** What a turn knows about its end user, loaded once before the model is called. */
export interface TurnUserContext {
  /** Every claim of the user, by key. Injected whichever agent answers. */
  claims: { claimKey: string; claimValue: unknown }[];
  /** This assistant's memory of the user, newest first, cut at the budget; empty when opted out. */
  memory: { id: string; content: string; createdAt: Date }[];
  /** Opted out of this assistant or of every assistant: load nothing, offer no save_to_memory. */
  memoryOptedOut: boolean;
}

/**
 * A safety bound on rows read per turn whatever the budget; items are never empty, so with the
 * default budget it is never the limit that applies.
 */
export const MAX_MEMORY_ITEMS_PER_TURN = 500;

@Injectable()
export class UserContextService {
  constructor(private readonly repository: UserContextRepository) {}

  /**
   * Claims, memory and opt-out of (organization, user, assistant) in one SQL statement. Memory
   * is the newest items whose lengths (in characters) add up to at most `memoryBudgetChars`;
   * the first item that does not fit ends the list, so what the model sees is always the most
   * recent run of memory.
   */
  async loadForTurn(
    organizationId: string,
    userId: string,
    assistantId: string,
    memoryBudgetChars: number,
  ): Promise<TurnUserContext> {
    const row = await this.repository.load(
      organizationId,
      userId,
      assistantId,
      Math.max(0, Math.floor(memoryBudgetChars)),
      MAX_MEMORY_ITEMS_PER_TURN,
    );
    return {
      claims: row.claims,
      memory: row.memory.map((item) => ({
        id: item.id,
        content: item.content,
        createdAt: new Date(item.createdAt),
      })),
      memoryOptedOut: row.memoryOptedOut,
    };
  }
}
