import { Injectable, Logger } from '@nestjs/common';
import { describeUnexpected } from '../common/errors/all-exceptions.filter.js';
import type {
  ServerTool,
  ServerToolDefinition,
  ToolExecutionContext,
  ToolResult,
} from '../tools/server-tool.js';
import { MAX_MEMORY_ITEM_CHARS, MemoryService, type SaveRefusal } from './memory.service.js';

export const SAVE_TO_MEMORY = 'save_to_memory';

const REFUSALS: Record<SaveRefusal, string> = {
  opted_out: 'The user has turned memory off; nothing was saved. Do not try again in this conversation.',
  empty: 'Nothing was saved: content was empty.',
  too_long: `Nothing was saved: content is longer than ${MAX_MEMORY_ITEM_CHARS} characters. Save a shorter note.`,
};

/**
 * The server-side tool behind automatic memory. Offer it only on the generic path of a turn that
 * has a user id and whose user has not opted out; the turn runs it itself and continues, so the
 * client never sees it as a function call.
 */
@Injectable()
export class SaveToMemoryTool implements ServerTool {
  readonly kind = 'memory' as const;
  readonly definition: ServerToolDefinition = {
    name: SAVE_TO_MEMORY,
    description:
      'Remember a short note about the user for future conversations with them: lasting preferences, ' +
      'goals, or facts they shared about themselves. Do not save secrets, credentials, or details that ' +
      'only matter to the current request. The note is saved privately for this user and this assistant.',
    parameters: {
      type: 'object',
      properties: {
        content: {
          type: 'string',
          description: `The note, one or two sentences, at most ${MAX_MEMORY_ITEM_CHARS} characters.`,
        },
      },
      required: ['content'],
      additionalProperties: false,
    },
  };

  private readonly logger = new Logger('Memory');

  constructor(private readonly memory: MemoryService) {}

  async execute(args: Record<string, unknown>, context: ToolExecutionContext): Promise<ToolResult> {
    if (!context.userId || !context.assistantId) {
      return { ok: false, error: 'Memory is not available in this conversation.' };
    }
    if (typeof args.content !== 'string') return { ok: false, error: 'content must be a string.' };
    try {
      const result = await this.memory.saveFromModel(
        context.organizationId,
        context.userId,
        context.assistantId,
        args.content,
      );
      if (!result.saved) return { ok: false, error: REFUSALS[result.reason ?? 'opted_out'] };
      return { ok: true, output: JSON.stringify({ saved: true }) };
    } catch (error) {
      // A tool never throws (the ServerTool contract); the log line carries no content or user id.
      this.logger.warn({ ...describeUnexpected(error), msg: 'save_to_memory failed' });
      return { ok: false, error: 'Memory could not be saved right now.' };
    }
  }
}
