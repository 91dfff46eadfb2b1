import type { UpstreamScript } from './fake-upstream.js';

/**
 * The fault scenarios of test/upstream-faults.e2e-spec.ts (Failover Bench's catalogue, on one
 * upstream): the upstream's script, the attempts it should see, and what the client should hear.
 * The deadlines they assume: headers 1500 ms, first token 2000 ms, stall 1000 ms.
 */

export const ANSWER = 'one two three four five six seven eight nine ten';

export type Outcome =
  | { completed: true }
  | {
      completed: false;
      code: string;
      status: number;
      /** The stream had relayed output before it failed. */
      afterOutput: boolean;
      /** The message names what happened. */
      message: RegExp;
      retryAfter?: string;
    };

export interface Scenario {
  name: string;
  scripts: UpstreamScript[];
  /** Requests the upstream receives (the first attempt and its retries). */
  attempts: number;
  outcome: Outcome;
  /** The upstream saw its request cancelled (a deadline aborted it). */
  cancelled?: boolean;
}

const failed = (
  code: string,
  status: number,
  message: RegExp,
  extra: { afterOutput?: boolean; retryAfter?: string } = {},
): Outcome => ({
  completed: false,
  code,
  status,
  message,
  afterOutput: extra.afterOutput ?? false,
  ...extra,
});

export const SCENARIOS: Scenario[] = [
  {
    name: '429 with Retry-After: waits for it, then answers',
    scripts: [{ status: 429, retryAfter: '1' }],
    attempts: 2,
    outcome: { completed: true },
  },
  {
    name: '429 with retry-after-ms: waits for it, then answers',
    scripts: [{ status: 429, retryAfterMs: '300', retryAfter: '30' }],
    attempts: 2,
    outcome: { completed: true },
  },
  {
    name: '429 without Retry-After: backs off, then answers',
    scripts: [{ status: 429 }],
    attempts: 2,
    outcome: { completed: true },
  },
  {
    name: '429 with a Retry-After beyond the budget: fails at once with that Retry-After',
    scripts: [{ status: 429, retryAfter: '120' }],
    attempts: 1,
    outcome: failed('upstream_rate_limited', 503, /rate-limiting.*retry after 120 s/, { retryAfter: '120' }),
  },
  {
    name: '500 once: retried, then answers',
    scripts: [{ status: 500 }],
    attempts: 2,
    outcome: { completed: true },
  },
  {
    name: '503 persistent: every retry spent, then 503 upstream_unavailable',
    scripts: [{ status: 503 }, { status: 503 }, { status: 503 }],
    attempts: 3,
    outcome: failed('upstream_unavailable', 503, /HTTP 503/),
  },
  {
    name: 'TCP reset before headers: retried, then answers',
    scripts: [{ reset: true }],
    attempts: 2,
    outcome: { completed: true },
  },
  {
    name: 'no response at all: the header deadline aborts the call',
    scripts: [{ hang: true }],
    attempts: 1,
    outcome: failed('upstream_timeout', 503, /no response within 1500 ms/),
    cancelled: true,
  },
  {
    name: 'slow first token: the first-token deadline aborts the call',
    scripts: [{ text: ANSWER, firstTokenDelayMs: 4000 }],
    attempts: 1,
    outcome: failed('upstream_timeout', 503, /no output within 2000 ms/),
    cancelled: true,
  },
  {
    name: 'stream cut mid-answer (clean end, no finish reason): failed, never completed',
    scripts: [{ text: ANSWER, cutAfterChunks: 4 }],
    attempts: 1,
    outcome: failed('upstream_stream_interrupted', 502, /cut mid-answer/, { afterOutput: true }),
  },
  {
    name: 'stream cut before its first token: retried, then answers',
    scripts: [{ text: ANSWER, cutAfterChunks: 0 }],
    attempts: 2,
    outcome: { completed: true },
  },
  {
    name: 'stream stall mid-answer: the stall timeout aborts the call, failed',
    scripts: [{ text: ANSWER, stallAfterChunks: 3 }],
    attempts: 1,
    outcome: failed('upstream_stream_stalled', 504, /stalled mid-answer/, { afterOutput: true }),
    cancelled: true,
  },
  {
    name: 'a malformed chunk mid-answer: skipped, the whole answer completes',
    scripts: [{ text: ANSWER, malformedAt: 3 }],
    attempts: 1,
    outcome: { completed: true },
  },
  {
    name: 'a malformed chunk and then a cut: failed, saying the stream was malformed',
    scripts: [{ text: ANSWER, malformedAt: 3, cutAfterChunks: 5 }],
    attempts: 1,
    outcome: failed('upstream_malformed_response', 502, /1 malformed event/, { afterOutput: true }),
  },
  {
    name: 'no [DONE] after the finish reason, body ended: completed with its usage',
    scripts: [{ text: ANSWER, omitDone: true }],
    attempts: 1,
    outcome: { completed: true },
  },
  {
    name: 'no [DONE] after the finish reason, body held open: completed at once with its usage',
    scripts: [{ text: ANSWER, holdOpen: true }],
    attempts: 1,
    outcome: { completed: true },
  },
  {
    name: '[DONE] without any finish reason: failed, never completed',
    scripts: [{ text: ANSWER, omitFinish: true }],
    attempts: 1,
    outcome: failed('upstream_stream_interrupted', 502, /\[DONE\] without a finish reason/, {
      afterOutput: true,
    }),
  },
  {
    name: 'context_length_exceeded: 400, not retried',
    scripts: [{ maxPromptChars: 1 }],
    attempts: 1,
    outcome: failed(
      'context_length_exceeded',
      400,
      /context window \(the model provider said: This model's maximum context length is 1 characters\)/,
    ),
  },
  {
    name: "content-policy rejection: 400 with the provider's reason, not retried, no Retry-After",
    scripts: [
      {
        status: 400,
        errorCode: 'content_policy_violation',
        errorType: 'invalid_request_error',
        errorMessage:
          'Your request was rejected as a result of our safety system (key sk-proj-abcdef0123456789).',
      },
    ],
    attempts: 1,
    outcome: failed(
      'content_policy_violation',
      400,
      /content policy: Your request was rejected .*safety system/,
    ),
  },
  {
    name: "another invalid request (HTTP 422): 400 upstream_invalid_request with the provider's reason",
    scripts: [{ status: 422, errorMessage: 'messages[1].content: unsupported audio input' }],
    attempts: 1,
    outcome: failed(
      'upstream_invalid_request',
      400,
      /HTTP 422\): messages\[1\]\.content: unsupported audio input/,
    ),
  },
];
