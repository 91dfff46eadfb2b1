import type { ExchangeResult, Protocol } from './http-client.js';

/** Messages between the bench (parent) and the load generator (child process). */

export interface Target {
  baseUrl: string;
  path: string;
  headers: Record<string, string>;
  protocol: Protocol;
}

export type Workload =
  | {
      kind: 'single';
      target: Target;
      body: unknown;
      stream: boolean;
      /** Text deltas a complete reply has (1 for a JSON body). */
      expectTokens: number;
    }
  | {
      /** Two requests: the model asks for a function, the client answers with its output. */
      kind: 'function-call';
      target: Target;
      body: unknown;
      stream: boolean;
      expectTokens: number;
      toolOutput: string;
    }
  | {
      /**
       * A background turn (`background: true`, JSON): the POST answers `queued`, then each
       * follower resumes its stream (`GET /v1/responses/{id}?stream=true`) at once; timing is
       * taken on the first follower, the others' events are compared with its (durable.ts).
       */
      kind: 'background';
      target: Target;
      body: unknown;
      stream: true;
      expectTokens: number;
      /** Base URLs of the replicas that follow the turn, the one running it first. */
      followers: string[];
      /** `starting_after` of the resumed streams; null = the whole stream. */
      startingAfter: number | null;
    };

export interface PhaseSpec {
  id: number;
  /** closed: N clients back to back; open: fixed arrival rate; hold: open N streams and keep them. */
  mode: 'closed' | 'open' | 'hold';
  concurrency: number;
  /** Arrivals per second (open); streams opened per second (hold). */
  rate: number;
  durationMs: number;
  /** Samples before this offset are discarded. */
  warmupMs: number;
  /**
   * Closed: client starts are spread over this time, so streams do not move in lockstep.
   * Hold: the plateau is reported after this long even if not every stream is open.
   */
  rampMs: number;
  timeoutMs: number;
  /**
   * Open: arrivals beyond this many outstanding requests are dropped and counted as errors.
   * Hold: at most this many streams wait for their first token at once.
   */
  maxOutstanding: number;
  /** An inter-token gap longer than this is a stall. */
  stallMs: number;
  workload: Workload;
}

export interface PhaseResult {
  id: number;
  /** Exchanges measured (started in the window). */
  samples: number;
  /** Turns (requests) completed inside the window: the denominator of CPU per turn. */
  turnsInWindow: number;
  windowMs: number;
  errors: Record<string, number>;
  ttft: number[];
  total: number[];
  gaps: number[];
  stalls: number;
  tokensInWindow: number;
  /** Open: arrivals scheduled in the window; hold: streams requested. */
  offered: number;
  /** Hold: streams that had their first token when the plateau was reported. */
  openAtPlateau?: number;
  /** Background: time until the POST answered (`queued`), ms. */
  accepted?: number[];
  /** Background with a second follower: how much later it saw each text delta than the first, ms. */
  deltaDelays?: number[];
  /** Background with a second follower: how much later it saw `response.completed`, ms. */
  completedDelays?: number[];
  /** Background with a second follower: its streams' open time over the exchanges that ended in the window, ms. */
  followerMsInWindow?: number;
}

export type ToLoadGenerator =
  { type: 'phase'; spec: PhaseSpec } | { type: 'release'; id: number } | { type: 'exit' };

export type FromLoadGenerator =
  | { type: 'ready' }
  | { type: 'window'; id: number; edge: 'start' | 'end' }
  | { type: 'plateau'; id: number; open: number }
  | { type: 'result'; id: number; result: PhaseResult };

/**
 * The second request of a function-call round trip, built from what the first returned, or a
 * sentence saying why there is none.
 */
export function followUpBody(
  workload: Extract<Workload, { kind: 'function-call' }>,
  first: ExchangeResult,
): unknown {
  const body = workload.body as Record<string, any>;
  if (workload.target.protocol === 'responses') {
    const call = first.response?.output?.find((item) => item.type === 'function_call');
    if (first.response?.status !== 'requires_action' || !call?.call_id)
      return 'no function call in the first reply';
    return {
      ...body,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: workload.toolOutput }],
      previous_response_id: first.response.id,
    };
  }
  if (!first.toolCall) return 'no function call in the first reply';
  return {
    ...body,
    messages: [
      ...body.messages,
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: first.toolCall.id,
            type: 'function',
            function: { name: first.toolCall.name, arguments: first.toolCall.arguments },
          },
        ],
      },
      { role: 'tool', tool_call_id: first.toolCall.id, content: workload.toolOutput },
    ],
  };
}
