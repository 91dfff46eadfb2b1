import { getHeapSpaceStatistics } from 'node:v8';
import { releaseBootMemory } from './boot-memory.js';
import { capYoungGeneration } from './young-generation.js';

const MiB = 1024 * 1024;
const youngGeneration = (): number =>
  getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;

/** Allocation in small slices, each in its own turn of the event loop, as a server allocates. */
async function allocate(slices: number): Promise<number> {
  let kept = 0;
  for (let slice = 0; slice < slices; slice++) {
    const survivors: unknown[] = [];
    for (let index = 0; index < 10_000; index++) survivors.push({ index, text: `item ${index}` });
    kept += survivors.length;
    // The cap steers after each collection, from V8's gc entries (delivered on a later turn).
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
  }
  return kept;
}

describe('capYoungGeneration', () => {
  it('keeps the young generation within the cap under sustained allocation, and lets go when ended', async () => {
    // Node 22+ (V8 12+) starts the young generation from its minimum here; Node 20 keeps what the
    // test runner grew, which the cap cannot shrink, only stop growing.
    releaseBootMemory();
    const start = youngGeneration();
    const end = capYoungGeneration(8);
    try {
      expect(await allocate(400)).toBe(4_000_000);
      expect(youngGeneration()).toBeLessThanOrEqual(Math.max(start, 8 * MiB));
    } finally {
      end();
    }
    if (start <= 2 * MiB) {
      await allocate(400);
      expect(youngGeneration()).toBeGreaterThan(8 * MiB);
    }
  });
});
