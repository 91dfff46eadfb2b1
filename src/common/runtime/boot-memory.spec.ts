import { getHeapSpaceStatistics } from 'node:v8';
import { releaseBootMemory } from './boot-memory.js';

const youngGeneration = (): number =>
  getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;

describe('releaseBootMemory', () => {
  it('never leaves `gc` on the global', () => {
    releaseBootMemory();
    releaseBootMemory();
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
  });

  // V8 12+ (Node 22+, the image's Node 26) takes the memory-reducing flavour; V8 11 (Node 20)
  // ignores it and collects without shrinking.
  const reduces = Number(process.versions.v8.split('.')[0]) >= 12;
  (reduces ? it : it.skip)(
    'takes the young generation back to its minimum after a burst of allocation',
    () => {
      const burst = (): number => {
        const garbage: unknown[] = [];
        for (let index = 0; index < 1_000_000; index++) garbage.push({ index });
        return garbage.length;
      };
      expect(burst()).toBe(1_000_000);
      const before = youngGeneration();
      releaseBootMemory();
      expect(youngGeneration()).toBeLessThan(before);
      expect(youngGeneration()).toBeLessThanOrEqual(2 * 1024 * 1024);
    },
  );
});
