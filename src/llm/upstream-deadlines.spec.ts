import { jest } from '@jest/globals';
import { UpstreamDeadlines } from './upstream-deadlines.js';

const limits = { headersMs: 1_000, firstTokenMs: 3_000, stallMs: 500 };

describe('UpstreamDeadlines', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('expires the headers deadline when no headers came', () => {
    const controller = new AbortController();
    const deadlines = new UpstreamDeadlines(limits, controller);
    jest.advanceTimersByTime(999);
    expect(controller.signal.aborted).toBe(false);
    jest.advanceTimersByTime(1);
    expect(deadlines.expired).toBe('headers');
    expect(controller.signal.aborted).toBe(true);
  });

  it('runs the first-token deadline from the attempt start once the headers came, past the headers deadline', () => {
    const controller = new AbortController();
    const deadlines = new UpstreamDeadlines(limits, controller);
    jest.advanceTimersByTime(200);
    deadlines.headersArrived();
    jest.advanceTimersByTime(2_799);
    expect(controller.signal.aborted).toBe(false);
    jest.advanceTimersByTime(1);
    expect(deadlines.expired).toBe('first_token');
    expect(controller.signal.aborted).toBe(true);
  });

  it('runs the stall deadline from the last read once output started', () => {
    const controller = new AbortController();
    const deadlines = new UpstreamDeadlines(limits, controller);
    deadlines.headersArrived();
    jest.advanceTimersByTime(2_000);
    deadlines.progressed(true);
    jest.advanceTimersByTime(400);
    deadlines.progressed(false);
    jest.advanceTimersByTime(499);
    expect(controller.signal.aborted).toBe(false);
    jest.advanceTimersByTime(1);
    expect(deadlines.expired).toBe('stall');
    deadlines.clear();
  });

  it('expires the first-token deadline when it is the shorter one', () => {
    const controller = new AbortController();
    const deadlines = new UpstreamDeadlines({ ...limits, headersMs: 5_000 }, controller);
    deadlines.headersArrived();
    jest.advanceTimersByTime(3_000);
    expect(deadlines.expired).toBe('first_token');
  });
});
