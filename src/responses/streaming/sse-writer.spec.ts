import { EventEmitter } from 'node:events';
import type { Response } from 'express';
import { SseWriter } from './sse-writer.js';

/** The parts of an express Response the writer uses, recording what was written and when. */
function fakeResponse() {
  const writes: { at: number; text: string }[] = [];
  const res = Object.assign(new EventEmitter(), {
    destroyed: false,
    writableEnded: false,
    status: () => res,
    setHeader: () => undefined,
    headersSent: false,
    flushHeaders: () => {
      res.headersSent = true;
      writes.push({ at: performance.now(), text: '<headers>' });
    },
    write: (text: string) => {
      res.headersSent = true;
      writes.push({ at: performance.now(), text });
      return true;
    },
    end: () => {
      res.writableEnded = true;
    },
  });
  return { res: res as unknown as Response, writes };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('SseWriter heartbeat', () => {
  it('sends a heartbeat only after a full quiet period, timed from the last write', async () => {
    const { res, writes } = fakeResponse();
    const writer = new SseWriter(res, 200);
    writer.open();
    // Events every 50 ms for 500 ms, then quiet for 450 ms.
    for (let i = 0; i < 10; i++) {
      writer.event('response.output_text.delta', { delta: `t${i}` });
      await sleep(50);
    }
    await sleep(450);
    writer.close();
    const isBeat = (text: string) => text === ': heartbeat\n\n';
    // Every heartbeat follows at least 200 ms without a write (timer rounding allowed); on a
    // loaded machine a 50 ms sleep may stretch past it, which makes a heartbeat right.
    writes.forEach((write, index) => {
      if (isBeat(write.text) && index > 0)
        expect(write.at - writes[index - 1].at).toBeGreaterThanOrEqual(195);
    });
    // The quiet after the last event got its heartbeat.
    const lastEvent = writes.findLastIndex((write) => !isBeat(write.text));
    expect(writes.slice(lastEvent + 1).some((write) => isBeat(write.text))).toBe(true);
    // While events came 50 ms apart, none.
    const gaps = writes.slice(1, lastEvent + 1).map((write, index) => write.at - writes[index].at);
    if (gaps.every((gap) => gap < 150))
      expect(writes.slice(0, lastEvent).some((w) => isBeat(w.text))).toBe(false);
  });

  it('sends nothing after close', async () => {
    const { res, writes } = fakeResponse();
    const writer = new SseWriter(res, 50);
    writer.open();
    writer.close();
    await sleep(120);
    expect(writes.filter((write) => write.text === ': heartbeat\n\n')).toHaveLength(0);
  });
});

describe('SseWriter writes', () => {
  it('sends the headers at once when opened uncorked', () => {
    const { res, writes } = fakeResponse();
    const writer = new SseWriter(res, 60_000);
    writer.open();
    writer.event('response.created', { n: 1 });
    writer.close();
    expect(writes.map((write) => write.text)).toEqual([
      '<headers>',
      'event: response.created\ndata: {"n":1}\n\n',
    ]);
  });

  it('sends the headers with the events written while corked, in one write', () => {
    const { res, writes } = fakeResponse();
    const writer = new SseWriter(res, 60_000);
    writer.cork();
    writer.open();
    writer.event('response.created', { n: 1 });
    writer.eventJson('response.in_progress', 1, '{"n":2}');
    writer.uncork();
    expect(writes.map((write) => write.text)).toEqual([
      'event: response.created\ndata: {"n":1}\n\nevent: response.in_progress\ndata: {"n":2}\n\n',
    ]);
    writer.close();
  });

  it('sends the headers at uncork when nothing was written while corked', () => {
    const { res, writes } = fakeResponse();
    const writer = new SseWriter(res, 60_000);
    writer.cork();
    writer.open();
    writer.uncork();
    expect(writes.map((write) => write.text)).toEqual(['<headers>']);
    writer.close();
  });

  it('sends no headers at uncork for a stream never opened (the reply may still be an HTTP error)', () => {
    const { res, writes } = fakeResponse();
    const writer = new SseWriter(res, 60_000);
    writer.cork();
    writer.uncork();
    expect(writes).toEqual([]);
    writer.close();
  });
});
