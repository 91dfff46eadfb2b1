import { setTimeout as sleep } from 'node:timers/promises';
import { TurnAbortedError, type UpstreamError } from './llm.types.js';

/** Backoff without a hint from the upstream: 200 ms doubling per attempt, capped at 4 s, with jitter. */
const BACKOFF_BASE_MS = 200;
const BACKOFF_CAP_MS = 4000;

/**
 * A failure before the first output that another attempt may fix (429, 408, 409, 5xx, a
 * connection error, a stream cut or malformed before its output). `retryAfterMs`: what the
 * upstream asked for, if it did.
 */
export class RetryableUpstreamError extends Error {
  constructor(
    readonly upstream: UpstreamError,
    readonly retryAfterMs?: number,
  ) {
    super(upstream.message);
  }
}

/**
 * How long the upstream asks to wait: `retry-after-ms` (OpenAI, Azure) first, then `Retry-After`
 * in seconds or as an HTTP date. Undefined without a usable hint.
 */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  const ms = headers?.get('retry-after-ms');
  if (ms && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Math.ceil(Number(ms));
  const value = headers?.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  // An HTTP date names its weekday and month; anything else (`-3`, `soon`) is no hint.
  if (!/^[A-Za-z]{3},/.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Full-jitter-ish exponential backoff: between half and all of min(cap, base * 2^attempt). */
export function backoffMs(attempt: number, random = Math.random): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** attempt);
  return Math.round(ceiling * (0.5 + random() / 2));
}

/**
 * The retries of one model call: at most `maxRetries`, and every attempt and wait within
 * `budgetMs` of the first attempt's start. `next` says how long to wait before the next attempt,
 * or throws the failure the client gets (with the upstream's Retry-After, if it gave one).
 */
export class RetryPolicy {
  private readonly deadline: number;
  private attempt = 0;

  constructor(
    private readonly maxRetries: number,
    budgetMs: number,
  ) {
    this.deadline = performance.now() + budgetMs;
  }

  next(failure: RetryableUpstreamError): number {
    const wait = failure.retryAfterMs ?? backoffMs(this.attempt);
    if (this.attempt >= this.maxRetries || performance.now() + wait > this.deadline) {
      throw failure.upstream;
    }
    this.attempt += 1;
    return wait;
  }
}

/** Waits before the next attempt; the client going away ends the wait (and the turn). */
export async function pause(ms: number, signal: AbortSignal): Promise<void> {
  try {
    await sleep(ms, undefined, { signal });
  } catch {
    throw new TurnAbortedError();
  }
}
