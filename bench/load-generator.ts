import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { exchange, RELEASED, type ExchangeResult } from './http-client.js';
import {
  followUpBody,
  type FromLoadGenerator,
  type PhaseResult,
  type PhaseSpec,
  type Target,
  type ToLoadGenerator,
  type Workload,
} from './load-protocol.js';

/**
 * The load generator, a process of its own so its CPU never counts against a server. Three
 * modes: open loop (arrivals at a fixed rate, latency measured from the scheduled time so a
 * stalled server cannot hide its queue: coordinated omission), closed loop (N clients back to
 * back) and hold (open N long streams and keep them, for memory per stream).
 */

const agents = new Map<string, http.Agent>();

/** One keep-alive pool per server; idle sockets close before the servers' 5 s keep-alive ends. */
function agentFor(baseUrl: string): http.Agent {
  let agent = agents.get(baseUrl);
  if (!agent) {
    agent = new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 10_000, timeout: 4000 });
    agents.set(baseUrl, agent);
  }
  return agent;
}

function send(message: FromLoadGenerator): void {
  process.send?.(message);
}

interface Sample {
  /** Start of the exchange, or its scheduled time in open loop. */
  origin: number;
  ttft?: number;
  total: number;
  gaps: number[];
  turns: number;
  endedAt: number;
  error?: string;
  /** Background turns (see the `background` workload). */
  accepted?: number;
  deltaDelays?: number[];
  completedDelay?: number;
  followerMs?: number;
}

class Phase {
  readonly result: PhaseResult;
  private windowStart = 0;
  private windowEnd = Infinity;
  private readonly agent: http.Agent;
  private readonly released = new AbortController();

  constructor(private readonly spec: PhaseSpec) {
    this.agent = agentFor(spec.workload.target.baseUrl);
    this.result = {
      id: spec.id,
      samples: 0,
      turnsInWindow: 0,
      windowMs: 0,
      errors: {},
      ttft: [],
      total: [],
      gaps: [],
      stalls: 0,
      tokensInWindow: 0,
      offered: 0,
    };
  }

  async run(): Promise<PhaseResult> {
    const start = performance.now();
    this.windowStart = start + this.spec.warmupMs;
    this.windowEnd = start + this.spec.durationMs;
    const sent = { start: false, end: false };
    const edge = (name: 'start' | 'end') => {
      if (sent[name]) return;
      sent[name] = true;
      send({ type: 'window', id: this.spec.id, edge: name });
    };
    const windowTimers = [
      setTimeout(() => edge('start'), this.spec.warmupMs),
      setTimeout(() => edge('end'), this.spec.durationMs),
    ];
    try {
      if (this.spec.mode === 'closed') await this.closed(start);
      else if (this.spec.mode === 'open') await this.open(start);
      else await this.hold(start);
    } finally {
      windowTimers.forEach(clearTimeout);
      // The last exchange can finish in the same turn of the event loop as the window's end.
      edge('start');
      edge('end');
    }
    this.result.windowMs = this.spec.mode === 'hold' ? 0 : this.spec.durationMs - this.spec.warmupMs;
    return this.result;
  }

  private inWindow(at: number): boolean {
    return at >= this.windowStart && at < this.windowEnd;
  }

  private record(sample: Sample): void {
    // A stream the bench closed itself (end of a hold) counts with what it received.
    if (sample.error === RELEASED)
      sample.error = sample.ttft === undefined ? 'closed before the first token' : undefined;
    if (this.inWindow(sample.endedAt)) {
      this.result.turnsInWindow += sample.error ? 0 : sample.turns;
      if (sample.followerMs !== undefined)
        this.result.followerMsInWindow = (this.result.followerMsInWindow ?? 0) + sample.followerMs;
    }
    if (!this.inWindow(sample.origin) && this.spec.mode !== 'hold') return;
    this.result.samples++;
    if (sample.error) {
      this.result.errors[sample.error] = (this.result.errors[sample.error] ?? 0) + 1;
      return;
    }
    if (sample.ttft !== undefined) this.result.ttft.push(sample.ttft);
    this.result.total.push(sample.total);
    if (sample.accepted !== undefined) (this.result.accepted ??= []).push(sample.accepted);
    if (sample.completedDelay !== undefined) (this.result.completedDelays ??= []).push(sample.completedDelay);
    if (sample.deltaDelays) {
      const delays = (this.result.deltaDelays ??= []);
      for (const delay of sample.deltaDelays) delays.push(delay);
    }
    for (const gap of sample.gaps) {
      this.result.gaps.push(gap);
      if (gap > this.spec.stallMs) this.result.stalls++;
    }
  }

  private async closed(start: number): Promise<void> {
    const deadline = start + this.spec.durationMs;
    const client = async (offset: number) => {
      await sleep(offset);
      while (performance.now() < deadline) this.record(await this.execute(performance.now()));
    };
    const clients = [];
    for (let index = 0; index < this.spec.concurrency; index++) {
      clients.push(client((index / this.spec.concurrency) * this.spec.rampMs));
    }
    await Promise.all(clients);
  }

  private async open(start: number): Promise<void> {
    const interval = 1000 / this.spec.rate;
    const count = Math.floor((this.spec.durationMs / 1000) * this.spec.rate);
    const pending = new Set<Promise<void>>();
    for (let index = 0; index < count; index++) {
      const scheduled = start + index * interval;
      const wait = scheduled - performance.now();
      // Never early: a send late by the timer's granularity counts against the server measured.
      if (wait > 0) await sleep(wait);
      if (this.inWindow(scheduled)) this.result.offered++;
      if (pending.size >= this.spec.maxOutstanding) {
        this.record({
          origin: scheduled,
          total: 0,
          gaps: [],
          turns: 0,
          endedAt: scheduled,
          error: 'dropped: too many outstanding',
        });
        continue;
      }
      const running: Promise<void> = this.execute(scheduled).then((sample) => {
        pending.delete(running);
        this.record(sample);
      });
      pending.add(running);
    }
    await Promise.all(pending);
  }

  /**
   * Opens `concurrency` streams, at most `rate` per second and with at most `maxOutstanding`
   * still waiting for their first token, so the ramp goes as fast as the server accepts streams
   * instead of flooding its accept queue. Reports the plateau, then closes them all on `release`.
   */
  private async hold(start: number): Promise<void> {
    const interval = 1000 / this.spec.rate;
    const running: Promise<void>[] = [];
    let open = 0;
    let waiting = 0;
    let wake: (() => void) | undefined;
    let plateauSent = false;
    const plateau = () => {
      if (plateauSent) return;
      plateauSent = true;
      this.result.openAtPlateau = open;
      send({ type: 'plateau', id: this.spec.id, open });
    };
    const lateness = setTimeout(plateau, this.spec.rampMs);
    for (let index = 0; index < this.spec.concurrency && !this.released.signal.aborted; index++) {
      const wait = start + index * interval - performance.now();
      if (wait > 1) await sleep(wait);
      while (waiting >= this.spec.maxOutstanding && !this.released.signal.aborted) {
        await new Promise<void>((resolve) => (wake = resolve));
      }
      this.result.offered++;
      waiting++;
      let counted = false;
      const first = () => {
        if (counted) return;
        counted = true;
        waiting--;
        wake?.();
        open++;
        if (open === this.spec.concurrency) plateau();
      };
      running.push(
        this.execute(performance.now(), first).then((sample) => {
          if (counted) open--;
          else {
            waiting--;
            wake?.();
          }
          this.record(sample);
        }),
      );
    }
    await Promise.all(running);
    clearTimeout(lateness);
    plateau();
  }

  /** Ends a hold: every stream still open is closed by the client (not an error). */
  release(): void {
    this.released.abort();
  }

  /** Runs the workload once; `origin` is when it should have started. */
  private async execute(origin: number, onFirstToken?: () => void): Promise<Sample> {
    const workload = this.spec.workload;
    if (workload.kind === 'background') return this.background(workload, origin, onFirstToken);
    const gaps: number[] = [];
    let last = 0;
    const onToken = (at: number) => {
      if (last === 0) onFirstToken?.();
      else gaps.push(at - last);
      last = at;
      if (this.inWindow(at)) this.result.tokensInWindow++;
    };
    const first = await this.call(workload.target, JSON.stringify(workload.body), workload.stream, onToken);
    if (workload.kind === 'single') {
      const error = first.error ?? checkTokens(first, workload.expectTokens);
      return {
        origin,
        ttft: first.firstTokenAt === undefined ? undefined : first.firstTokenAt - origin,
        total: first.endedAt - origin,
        gaps,
        turns: 1,
        endedAt: first.endedAt,
        error,
      };
    }
    if (first.error) return { origin, total: 0, gaps, turns: 0, endedAt: first.endedAt, error: first.error };
    const followUp = followUpBody(workload, first);
    if (typeof followUp === 'string')
      return { origin, total: 0, gaps, turns: 0, endedAt: first.endedAt, error: followUp };
    last = 0;
    const second = await this.call(workload.target, JSON.stringify(followUp), workload.stream, onToken);
    const error = second.error ?? checkTokens(second, workload.expectTokens);
    return {
      origin,
      // The follow-up's own time to first token: what a user waits for after submitting the result.
      ttft: second.firstTokenAt === undefined ? undefined : second.firstTokenAt - second.startedAt,
      total: second.endedAt - origin,
      gaps,
      turns: 2,
      endedAt: second.endedAt,
      error,
    };
  }

  /**
   * A background turn: the POST (`queued`), then every follower resumes the stream at once.
   * TTFT and total are the first follower's; a second follower's lag is taken per text delta
   * and at `response.completed`, on the same clock (this process).
   */
  private async background(
    workload: Extract<Workload, { kind: 'background' }>,
    origin: number,
    onFirstToken?: () => void,
  ): Promise<Sample> {
    const created = await exchange({
      agent: this.agent,
      baseUrl: workload.target.baseUrl,
      path: workload.target.path,
      headers: workload.target.headers,
      body: JSON.stringify(workload.body),
      protocol: 'responses',
      stream: false,
      timeoutMs: this.spec.timeoutMs,
      acceptStatuses: ['queued', 'in_progress'],
      signal: this.released.signal,
    });
    const accepted = created.endedAt - origin;
    const id = created.response?.id;
    if (created.error || !id)
      return {
        origin,
        total: 0,
        gaps: [],
        turns: 0,
        endedAt: created.endedAt,
        error: created.error ?? 'no id',
      };
    const query = `?stream=true${workload.startingAfter === null ? '' : `&starting_after=${workload.startingAfter}`}`;
    const stamps: number[][] = workload.followers.map(() => []);
    const follows = await Promise.all(
      workload.followers.map((baseUrl, index) =>
        exchange({
          agent: agentFor(baseUrl),
          baseUrl,
          path: `${workload.target.path}/${id}${query}`,
          headers: workload.target.headers,
          body: null,
          protocol: 'responses',
          stream: true,
          timeoutMs: this.spec.timeoutMs,
          onToken: (at) => {
            if (index === 0 && stamps[0].length === 0) onFirstToken?.();
            if (index === 0 && this.inWindow(at)) this.result.tokensInWindow++;
            stamps[index].push(at);
          },
          signal: this.released.signal,
        }),
      ),
    );
    const [first, second] = follows;
    const gaps = stamps[0].slice(1).map((at, index) => at - stamps[0][index]);
    const failed = follows.find((follow) => follow.error);
    const error =
      (failed ? `${failed === first ? '' : 'second follower: '}${failed.error}` : undefined) ??
      follows.map((follow) => checkTokens(follow, workload.expectTokens)).find(Boolean);
    const sample: Sample = {
      origin,
      ttft: first.firstTokenAt === undefined ? undefined : first.firstTokenAt - origin,
      total: (first.completedAt ?? first.endedAt) - origin,
      gaps,
      turns: 1,
      endedAt: Math.max(...follows.map((follow) => follow.endedAt)),
      error,
      accepted,
    };
    if (second && !error) {
      sample.deltaDelays = stamps[1].map((at, index) => at - stamps[0][index]);
      if (first.completedAt !== undefined && second.completedAt !== undefined)
        sample.completedDelay = second.completedAt - first.completedAt;
      sample.followerMs = second.endedAt - second.startedAt;
    }
    return sample;
  }

  private call(
    target: Target,
    body: string,
    stream: boolean,
    onToken: (at: number) => void,
  ): Promise<ExchangeResult> {
    return exchange({
      agent: this.agent,
      baseUrl: target.baseUrl,
      path: target.path,
      headers: target.headers,
      body,
      protocol: target.protocol,
      stream,
      timeoutMs: this.spec.timeoutMs,
      onToken,
      signal: this.released.signal,
    });
  }
}

function checkTokens(result: ExchangeResult, expected: number): string | undefined {
  return result.tokens === expected ? undefined : `incomplete reply (${result.tokens}/${expected} tokens)`;
}

const phases = new Map<number, Phase>();
process.on('message', (message: ToLoadGenerator) => {
  if (message.type === 'exit') {
    for (const agent of agents.values()) agent.destroy();
    process.exit(0);
  }
  if (message.type === 'release') {
    phases.get(message.id)?.release();
    return;
  }
  const phase = new Phase(message.spec);
  phases.set(message.spec.id, phase);
  void phase.run().then((result) => {
    phases.delete(message.spec.id);
    send({ type: 'result', id: message.spec.id, result });
  });
});
process.on('disconnect', () => process.exit(0));
send({ type: 'ready' });
