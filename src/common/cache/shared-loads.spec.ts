import { jest } from '@jest/globals';
import { SharedLoads } from './shared-loads.js';

/** A load the test finishes by hand, counting how often it was started. */
function manualLoad<V>() {
  let finish!: (value: V) => void;
  let fail!: (error: Error) => void;
  const calls = { count: 0 };
  const load = () => {
    calls.count++;
    return new Promise<V>((resolve, reject) => {
      finish = resolve;
      fail = reject;
    });
  };
  return { load, calls, finish: (value: V) => finish(value), fail: (error: Error) => fail(error) };
}

describe('SharedLoads', () => {
  it('runs one load for the callers that miss the same key while it runs, and keeps its result once', async () => {
    const loads = new SharedLoads<string>();
    const { load, calls, finish } = manualLoad<string>();
    const kept: string[] = [];
    const answers = Promise.all([1, 2, 3].map(() => loads.run('key', load, (value) => kept.push(value))));
    finish('row');
    expect(await answers).toEqual(['row', 'row', 'row']);
    expect(calls.count).toBe(1);
    expect(kept).toEqual(['row']);
  });

  it('loads other keys apart, and the same key again once the load ended', async () => {
    const loads = new SharedLoads<string>();
    let count = 0;
    const load = (value: string) => () => Promise.resolve(`${value}${++count}`);
    expect(
      await Promise.all([loads.run('a', load('a'), () => {}), loads.run('b', load('b'), () => {})]),
    ).toEqual(['a1', 'b2']);
    expect(await loads.run('a', load('a'), () => {})).toBe('a3');
  });

  it('does not keep a load its key was forgotten during, and starts a new one for the next miss', async () => {
    const loads = new SharedLoads<string>();
    const first = manualLoad<string>();
    const kept: string[] = [];
    const before = loads.run('key', first.load, (value) => kept.push(value));
    loads.forget('key');
    const second = manualLoad<string>();
    const after = loads.run('key', second.load, (value) => kept.push(value));
    first.finish('old');
    second.finish('new');
    expect([await before, await after]).toEqual(['old', 'new']);
    expect(second.calls.count).toBe(1);
    expect(kept).toEqual(['new']);

    const third = manualLoad<string>();
    const cleared = loads.run('other', third.load, (value) => kept.push(value));
    loads.forgetAll();
    third.finish('stale');
    await cleared;
    expect(kept).toEqual(['new']);
  });

  it('hands a failed load to every caller waiting for it, keeps nothing and lets the next miss retry', async () => {
    const loads = new SharedLoads<string>();
    const failing = manualLoad<string>();
    const kept: string[] = [];
    const waiting = [1, 2].map(() => loads.run('key', failing.load, (value) => kept.push(value)));
    failing.fail(new Error('database unavailable'));
    for (const answer of waiting) await expect(answer).rejects.toThrow('database unavailable');
    expect(failing.calls.count).toBe(1);
    expect(
      await loads.run(
        'key',
        () => Promise.resolve('row'),
        (value) => kept.push(value),
      ),
    ).toBe('row');
    expect(kept).toEqual(['row']);
  });

  it('does not join a load older than its bound: a miss after it starts a load of its own', async () => {
    jest.useFakeTimers({ now: 0 });
    try {
      const loads = new SharedLoads<string>(2_000);
      const hung = manualLoad<string>();
      const kept: string[] = [];
      const stuck = loads.run('key', hung.load, (value) => kept.push(value));
      jest.setSystemTime(1_999);
      const joined = loads.run('key', hung.load, (value) => kept.push(value));
      expect(hung.calls.count).toBe(1);
      jest.setSystemTime(2_000);
      expect(
        await loads.run(
          'key',
          () => Promise.resolve('fresh'),
          (value) => kept.push(value),
        ),
      ).toBe('fresh');
      expect(kept).toEqual(['fresh']);
      hung.finish('late');
      expect([await stuck, await joined]).toEqual(['late', 'late']);
      expect(kept).toEqual(['fresh']);
    } finally {
      jest.useRealTimers();
    }
  });
});
