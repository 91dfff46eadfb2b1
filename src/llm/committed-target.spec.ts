import { CommittedTarget } from './committed-target.js';
import { UpstreamError, type ModelEvent } from './llm.types.js';
import { nextBatch, ReadBatches, type ModelEventReader } from './model-event-stream.js';

const text = (delta: string): ModelEvent[] => [{ type: 'text', delta }];

/** A target that gives its batches, then fails (its answer is cut). */
function cutAfter(...batches: ModelEvent[][]): ModelEventReader {
  const given = new ReadBatches(batches);
  return {
    read: () => {
      const batch = given.read();
      if (batch === undefined) throw new UpstreamError('upstream_stream_interrupted', 'cut');
      return batch;
    },
    readable: () => Promise.resolve(),
    close: () => undefined,
  };
}

describe('CommittedTarget', () => {
  it("keeps the cut target's relayed output for its continuation, and not the continuation's", async () => {
    const relayed: ModelEvent[][] = [];
    let done = 0;
    const target = new CommittedTarget(cutAfter(text('Hel')), {
      relayed: (batch) => relayed.push(batch),
      completed: () => Promise.resolve(),
      failed: () => Promise.resolve(new ReadBatches([text('lo'), text('!')])),
      done: () => (done += 1),
    });
    const read: ModelEvent[][] = [];
    for (let batch = await nextBatch(target); batch !== undefined; batch = await nextBatch(target))
      read.push(batch);
    expect(read).toEqual([text('Hel'), text('lo'), text('!')]);
    expect(relayed).toEqual([text('Hel')]);
    expect(done).toBe(1);
  });
});
