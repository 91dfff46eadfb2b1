import { Logger } from '@nestjs/common';
import { SaveToMemoryTool } from './save-to-memory.tool.js';
import type { MemoryService, SaveResult } from './memory.service.js';

describe('SaveToMemoryTool', () => {
  // The failure case logs a warning by design; keep the test output clean.
  beforeAll(() => Logger.overrideLogger(false));

  const context = {
    organizationId: 'org',
    assistantId: 'assistant',
    userId: 'user',
    signal: new AbortController().signal,
  };
  const toolWith = (save: (...args: string[]) => Promise<SaveResult>) => {
    const calls: string[][] = [];
    const memory = {
      saveFromModel: (...args: string[]) => {
        calls.push(args);
        return save(...args);
      },
    } as unknown as MemoryService;
    return { tool: new SaveToMemoryTool(memory), calls };
  };

  it('is the server-side memory tool with a content parameter', () => {
    const { tool } = toolWith(() => Promise.resolve({ saved: true, id: 'x' }));
    expect(tool.kind).toBe('memory');
    expect(tool.definition.name).toBe('save_to_memory');
    expect(tool.definition.parameters.required).toEqual(['content']);
  });

  it('saves for the organization, user and assistant of the turn and acknowledges', async () => {
    const { tool, calls } = toolWith(() => Promise.resolve({ saved: true, id: 'x' }));
    expect(await tool.execute({ content: 'likes tea' }, context)).toEqual({
      ok: true,
      output: '{"saved":true}',
    });
    expect(calls).toEqual([['org', 'user', 'assistant', 'likes tea']]);
  });

  it('tells the model why nothing was saved', async () => {
    const { tool } = toolWith(() => Promise.resolve({ saved: false, reason: 'opted_out' }));
    const result = await tool.execute({ content: 'x' }, context);
    expect(result).toEqual({ ok: false, error: expect.stringContaining('turned memory off') });
    const tooLong = toolWith(() => Promise.resolve({ saved: false, reason: 'too_long' }));
    expect(await tooLong.tool.execute({ content: 'x' }, context)).toEqual({
      ok: false,
      error: expect.stringContaining('2000'),
    });
  });

  it('refuses without a user or an assistant, or without string content, and never throws', async () => {
    const { tool, calls } = toolWith(() => Promise.reject(new Error('database down')));
    expect((await tool.execute({ content: 'x' }, { ...context, userId: undefined })).ok).toBe(false);
    expect((await tool.execute({ content: 42 }, context)).ok).toBe(false);
    expect(calls).toEqual([]);
    expect(await tool.execute({ content: 'x' }, context)).toEqual({
      ok: false,
      error: 'Memory could not be saved right now.',
    });
  });
});
