import { LifecycleState } from './lifecycle.state.js';

describe('LifecycleState', () => {
  it('moves from running to stopping, draining and expired', () => {
    const state = new LifecycleState();
    expect([state.shuttingDown, state.acceptingResponses]).toEqual([false, true]);
    state.beginShutdown();
    expect([state.phase, state.shuttingDown, state.acceptingResponses]).toEqual(['stopping', true, true]);
    state.stopAccepting();
    expect([state.phase, state.acceptingResponses]).toEqual(['draining', false]);
    expect(state.drainDeadline.aborted).toBe(false);
    state.expireGracePeriod();
    expect(state.phase).toBe('expired');
    expect(state.drainDeadline.aborted).toBe(true);
    expect(state.drainDeadline.reason).toMatchObject({
      code: 'service_overloaded',
      headers: { 'Retry-After': '1' },
    });
  });

  it('resolves whenIdle once the last request in flight finishes', async () => {
    const state = new LifecycleState();
    await state.whenIdle();
    state.requestStarted();
    state.requestStarted();
    let idle = false;
    const waiting = state.whenIdle().then(() => (idle = true));
    state.requestFinished();
    await Promise.resolve();
    expect(idle).toBe(false);
    state.requestFinished();
    await waiting;
    expect(state.activeRequests).toBe(0);
  });

  it('resolves whenWritesSettled once the writes handed to finishBeforeExit have settled', async () => {
    const state = new LifecycleState();
    await state.whenWritesSettled();
    let finishWrite!: () => void;
    const write = state.finishBeforeExit(new Promise<void>((resolve) => (finishWrite = resolve)));
    const failing = state.finishBeforeExit(Promise.reject(new Error('database gone')));
    failing.catch(() => undefined);
    let settled = false;
    const waiting = state.whenWritesSettled().then(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    finishWrite();
    await write;
    await waiting;
    expect(settled).toBe(true);
  });
});
