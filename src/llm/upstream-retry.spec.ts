import { UpstreamError } from './llm.types.js';
import { backoffMs, RetryableUpstreamError, retryAfterMs, RetryPolicy } from './upstream-retry.js';

const headers = (entries: Record<string, string>) => new Headers(entries);

describe('retryAfterMs', () => {
  const now = Date.parse('2026-11-27T12:00:00Z');

  it('reads retry-after-ms first, then Retry-After in seconds or as an HTTP date', () => {
    expect(retryAfterMs(headers({ 'retry-after-ms': '250', 'retry-after': '9' }), now)).toBe(250);
    expect(retryAfterMs(headers({ 'retry-after': '2' }), now)).toBe(2000);
    expect(retryAfterMs(headers({ 'retry-after': '0.5' }), now)).toBe(500);
    expect(retryAfterMs(headers({ 'retry-after': 'Fri, 27 Nov 2026 12:00:03 GMT' }), now)).toBe(3000);
    // A date in the past: retry now.
    expect(retryAfterMs(headers({ 'retry-after': 'Fri, 27 Nov 2026 11:00:00 GMT' }), now)).toBe(0);
  });

  it('ignores what is not a usable hint', () => {
    expect(retryAfterMs(undefined, now)).toBeUndefined();
    expect(retryAfterMs(headers({}), now)).toBeUndefined();
    expect(retryAfterMs(headers({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(retryAfterMs(headers({ 'retry-after': '-3' }), now)).toBeUndefined();
    expect(retryAfterMs(headers({ 'retry-after-ms': 'abc', 'retry-after': '1' }), now)).toBe(1000);
  });
});

describe('backoffMs', () => {
  it('doubles per attempt up to its cap, between half and all of it', () => {
    expect(backoffMs(0, () => 0)).toBe(100);
    expect(backoffMs(0, () => 1)).toBe(200);
    expect(backoffMs(2, () => 1)).toBe(800);
    expect(backoffMs(10, () => 1)).toBe(4000);
    expect(backoffMs(10, () => 0)).toBe(2000);
  });
});

describe('RetryPolicy', () => {
  const failure = (hintMs?: number) =>
    new RetryableUpstreamError(new UpstreamError('upstream_rate_limited', 'limited', 7), hintMs);

  it('waits what the upstream asked, at most maxRetries times, then throws the failure', () => {
    const policy = new RetryPolicy(2, 60_000);
    expect(policy.next(failure(1500))).toBe(1500);
    expect(policy.next(failure(10))).toBe(10);
    expect(() => policy.next(failure(10))).toThrow(UpstreamError);
  });

  it('fails at once when the wait would run past the budget, with the upstream Retry-After', () => {
    const policy = new RetryPolicy(5, 1000);
    let thrown: unknown;
    try {
      policy.next(failure(5000));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(UpstreamError);
    expect((thrown as UpstreamError).code).toBe('upstream_rate_limited');
    expect((thrown as UpstreamError).retryAfterSeconds).toBe(7);
  });

  it('with no budget, never retries', () => {
    expect(() => new RetryPolicy(3, 0).next(failure())).toThrow(UpstreamError);
  });
});
