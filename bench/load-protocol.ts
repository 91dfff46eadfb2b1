import type { Protocol } from './http-client.js';

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
}

export type ToLoadGenerator =
  { type: 'phase'; spec: PhaseSpec } | { type: 'release'; id: number } | { type: 'exit' };

export type FromLoadGenerator =
  | { type: 'ready' }
  | { type: 'window'; id: number; edge: 'start' | 'end' }
  | { type: 'plateau'; id: number; open: number }
  | { type: 'result'; id: number; result: PhaseResult };
