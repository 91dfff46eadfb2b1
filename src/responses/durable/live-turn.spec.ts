import { Logger } from '@nestjs/common';
import type { StoredEvent, TurnLedger } from '../store/turn-ledger.repository.js';
import { ResponseRecorder } from '../streaming/response-recorder.js';
import { LiveTurn } from './live-turn.js';

/** A ledger double that records each batch, and fails the writes it is told to. */
function fakeLedger(failures = 0) {
  const batches: StoredEvent[][] = [];
  let failing = failures;
  const ledger = {
    appendEvents: (_id: string, events: StoredEvent[]) => {
      if (failing > 0) {
        failing -= 1;
        return Promise.reject(new Error('database unreachable'));
      }
      batches.push([...events]);
      return Promise.resolve();
    },
  } as unknown as TurnLedger;
  return { ledger, batches };
}

const quiet = new Logger('test');
quiet.warn = () => undefined;

describe('LiveTurn', () => {
  it('keeps every event as the exact JSON sent and writes them in batches, not one by one', async () => {
    const { ledger, batches } = fakeLedger();
    const live = new LiveTurn('r1', ledger, 60_000, quiet);
    const recorder = new ResponseRecorder(live, { status: false, reasoning: 'response.reasoning' });
    recorder.emit('response.created', { response: { id: 'resp_x' } });
    recorder.text('Hel');
    recorder.text('lo');
    expect(batches).toEqual([]);
    await live.flush();
    expect(batches).toHaveLength(1);
    expect(batches[0].map((event) => [event.sequenceNumber, event.type])).toEqual([
      [0, 'response.created'],
      [1, 'response.output_item.added'],
      [2, 'response.content_part.added'],
      [3, 'response.output_text.delta'],
      [4, 'response.output_text.delta'],
    ]);
    expect(JSON.parse(batches[0][4].data)).toMatchObject({ sequence_number: 4, delta: 'lo' });
    expect(live.frames).toEqual(batches[0]);
    live.end();
  });

  it('keeps a batch the database refused as it was and writes it before the next one', async () => {
    const { ledger, batches } = fakeLedger(1);
    const live = new LiveTurn('r1', ledger, 60_000, quiet);
    const recorder = new ResponseRecorder(live, { status: false, reasoning: 'response.reasoning' });
    recorder.emit('response.created', {});
    await live.flush();
    expect(batches).toEqual([]);
    recorder.emit('response.error', {});
    await live.flush();
    expect(batches.map((batch) => batch.map((event) => event.sequenceNumber))).toEqual([[0], [1]]);
    live.end();
  });

  it('stores nothing more once stopped, but still feeds followers on this replica', async () => {
    const { ledger, batches } = fakeLedger();
    const live = new LiveTurn('r1', ledger, 60_000, quiet);
    const recorder = new ResponseRecorder(live, { status: false, reasoning: 'response.reasoning' });
    recorder.emit('response.created', {});
    live.stopStoring();
    const woken = live.changed(new AbortController().signal);
    expect(await isSettled(woken)).toBe(false);
    recorder.emit('response.output_item.added', {});
    await woken;
    await live.flush();
    expect(batches).toEqual([]);
    expect(live.frames).toHaveLength(2);
    live.end();
  });

  it('wakes a waiting follower at the end of the turn or when its client leaves', async () => {
    const { ledger } = fakeLedger();
    const live = new LiveTurn('r1', ledger, 60_000, quiet);
    const client = new AbortController();
    const leaving = live.changed(client.signal);
    expect(await isSettled(leaving)).toBe(false);
    client.abort();
    await leaving;
    const ending = live.changed(new AbortController().signal);
    expect(await isSettled(ending)).toBe(false);
    live.end();
    await ending;
    expect(live.ended).toBe(true);
  });

  it('hands the final write every batch not stored yet, and keeps them when that write fails', async () => {
    const { ledger, batches } = fakeLedger(1);
    const live = new LiveTurn('r1', ledger, 60_000, quiet);
    const recorder = new ResponseRecorder(live, { status: false, reasoning: 'response.reasoning' });
    recorder.emit('response.created', { response: { id: 'resp_x' } });
    await live.flush(); // refused: kept
    recorder.emit('response.completed', { response: { id: 'resp_x' } });
    const written: number[][][] = [];
    const write = (fail: boolean) => (pending: StoredEvent[][]) => {
      written.push(pending.map((batch) => batch.map((event) => event.sequenceNumber)));
      return fail ? Promise.reject(new Error('database unreachable')) : Promise.resolve();
    };
    await expect(live.finish(write(true))).rejects.toThrow('database unreachable');
    await live.finish(write(false));
    expect(written).toEqual([
      [[0], [1]],
      [[0], [1]],
    ]);
    // Nothing went through the flushes, and nothing is left for them.
    await live.flush();
    expect(batches).toEqual([]);
    live.end();
  });
});

/** Whether a promise has settled once every pending callback (and I/O turn) has run. */
async function isSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
}
