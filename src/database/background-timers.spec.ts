import { jest } from '@jest/globals';
import { BackgroundTimers } from './background-timers.js';
import { SchemaReadiness } from './schema-readiness.js';

describe('BackgroundTimers', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('starts the work once the schema is ready, and ticks until stopped', async () => {
    const readiness = new SchemaReadiness();
    const timers = new BackgroundTimers();
    let ticks = 0;
    timers.startWhenReady(readiness, () => timers.every(100, () => ticks++));
    await jest.advanceTimersByTimeAsync(500);
    expect(ticks).toBe(0);
    readiness.markReady();
    await jest.advanceTimersByTimeAsync(350);
    expect(ticks).toBe(3);
    timers.stop();
    await jest.advanceTimersByTimeAsync(500);
    expect(ticks).toBe(3);
    expect(timers.stopped).toBe(true);
  });

  it('never starts a worker stopped before the schema was ready', async () => {
    const readiness = new SchemaReadiness();
    const timers = new BackgroundTimers();
    let started = false;
    timers.startWhenReady(readiness, () => {
      started = true;
    });
    timers.stop();
    readiness.markReady();
    await jest.advanceTimersByTimeAsync(0);
    expect(started).toBe(false);
  });

  it('starts no timer once stopped during an asynchronous start', async () => {
    const readiness = new SchemaReadiness();
    const timers = new BackgroundTimers();
    let ticks = 0;
    let finishFirstPass: () => void = () => undefined;
    timers.startWhenReady(readiness, async () => {
      await new Promise<void>((resolve) => (finishFirstPass = resolve));
      timers.every(100, () => ticks++);
    });
    readiness.markReady();
    await jest.advanceTimersByTimeAsync(0);
    timers.stop();
    finishFirstPass();
    await jest.advanceTimersByTimeAsync(500);
    expect(ticks).toBe(0);
  });

  it('waits in idle for a start pass still running when the worker stops', async () => {
    const readiness = new SchemaReadiness();
    const timers = new BackgroundTimers();
    let finishFirstPass: () => void = () => undefined;
    timers.startWhenReady(readiness, () => new Promise<void>((resolve) => (finishFirstPass = resolve)));
    readiness.markReady();
    await jest.advanceTimersByTimeAsync(0);
    timers.stop();
    let idle = false;
    void timers.idle().then(() => (idle = true));
    await jest.advanceTimersByTimeAsync(0);
    expect(idle).toBe(false);
    finishFirstPass();
    await jest.advanceTimersByTimeAsync(0);
    expect(idle).toBe(true);
  });

  it('runs a tick once after its delay, unless cancelled or stopped first', async () => {
    const timers = new BackgroundTimers();
    const ran: string[] = [];
    timers.after(100, () => ran.push('kept'));
    const cancel = timers.after(100, () => ran.push('cancelled'));
    cancel();
    await jest.advanceTimersByTimeAsync(150);
    expect(ran).toEqual(['kept']);
    timers.after(100, () => ran.push('stopped'));
    timers.stop();
    timers.after(100, () => ran.push('after the stop'));
    await jest.advanceTimersByTimeAsync(500);
    expect(ran).toEqual(['kept']);
  });
});
