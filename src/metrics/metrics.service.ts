import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { UpstreamErrorCode } from '../llm/llm.types.js';

/** Distinct (organization, assistant) label pairs per replica; later pairs are counted as `other`. */
export const USAGE_LABEL_PAIRS_MAX = 500;

export type UpstreamOutcome = 'ok' | UpstreamErrorCode | 'aborted';
export type ShedReason = 'overload' | 'shutdown' | 'organization';

/** Request durations run from milliseconds (JSON) to minutes (streams). */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const FIRST_TOKEN_BUCKETS = [0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 20, 30, 60];

/**
 * Prometheus metrics of this replica, in a registry of its own (several app instances can share a
 * process in tests). Every method is a constant-time update: callers report once per request,
 * upstream call or stream, never per token with labels.
 */
@Injectable()
export class Metrics {
  private readonly registry = new Registry();

  private readonly httpRequests = new Counter({
    name: 'switchboard_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  private readonly httpDuration = new Histogram({
    name: 'switchboard_http_request_duration_seconds',
    help: 'Time from request to the end of the response (the whole stream for SSE)',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });
  private readonly upstreamDuration = new Histogram({
    name: 'switchboard_upstream_request_duration_seconds',
    help: 'Duration of upstream model calls, by provider and outcome',
    labelNames: ['provider', 'outcome'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });
  private readonly upstreamErrors = new Counter({
    name: 'switchboard_upstream_errors_total',
    help: 'Upstream model calls that failed, by provider and error code',
    labelNames: ['provider', 'code'] as const,
    registers: [this.registry],
  });
  private readonly breakers = new Gauge({
    name: 'switchboard_upstream_breaker_state',
    help: "Upstream targets' circuit breakers as this replica last saw them: 0 closed, 1 open (cooling down), 2 half-open (probing)",
    labelNames: ['organization_id', 'target'] as const,
    registers: [this.registry],
  });
  private readonly upstreamClientsClosed = new Counter({
    name: 'switchboard_upstream_clients_closed_total',
    help: 'Upstream clients (each with its connection pool) closed to keep at most 256 per replica; a steady rise means more upstream URLs and keys are in use than that, and connections are reopened',
    registers: [this.registry],
  });
  private readonly firstToken = new Histogram({
    name: 'switchboard_time_to_first_token_seconds',
    help: 'Time from the start of a model call to its first streamed event',
    labelNames: ['provider'] as const,
    buckets: FIRST_TOKEN_BUCKETS,
    registers: [this.registry],
  });
  private readonly tokens = new Counter({
    name: 'switchboard_tokens_relayed_total',
    help: 'Output text deltas relayed to clients',
    registers: [this.registry],
  });
  private readonly openStreams = new Gauge({
    name: 'switchboard_open_streams',
    help: 'Server-Sent Events streams open now',
    registers: [this.registry],
  });
  private readonly inFlight = new Gauge({
    name: 'switchboard_responses_in_flight',
    help: 'Responses (JSON or streamed) being produced now',
    registers: [this.registry],
  });
  private readonly rateLimited = new Counter({
    name: 'switchboard_rate_limit_rejections_total',
    help: 'Requests refused with 429 rate_limit_exceeded',
    registers: [this.registry],
  });
  private readonly rateLimitStoreErrors = new Counter({
    name: 'switchboard_rate_limit_store_errors_total',
    help: 'Rate-limit checks that could not reach Redis and were counted in process instead',
    registers: [this.registry],
  });
  private readonly shedRequests = new Counter({
    name: 'switchboard_shed_requests_total',
    help: 'Response requests refused at once: 503 service_overloaded (overload, shutdown) or 429 concurrency_limit_exceeded (organization), by reason',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  private readonly usageTokensTotal = new Counter({
    name: 'switchboard_usage_tokens_total',
    help:
      'Tokens the upstream reported for finished turns, by organization id, assistant id and type ' +
      `(input, cached, output, reasoning); past ${USAGE_LABEL_PAIRS_MAX} pairs per replica, "other"`,
    labelNames: ['organization', 'assistant', 'type'] as const,
    registers: [this.registry],
  });
  private readonly usagePairs = new Set<string>();
  private readonly background = new Gauge({
    name: 'switchboard_background_responses',
    help: 'Background responses of this replica, by state (queued: waiting for BACKGROUND_MAX_RUNNING)',
    labelNames: ['state'] as const,
    registers: [this.registry],
  });
  private readonly resumed = new Counter({
    name: 'switchboard_resumed_streams_total',
    help: 'Streams of background responses resumed with GET /v1/responses/{id}?stream=true',
    registers: [this.registry],
  });
  private readonly leaseExpiries = new Counter({
    name: 'switchboard_turn_lease_expiries_total',
    help: 'Running turns this replica marked failed because their replica stopped renewing the lease',
    registers: [this.registry],
  });

  constructor() {
    // prom-client's 10 ms event-loop sampling is kept although it wakes an idle loop 100 times a
    // second: its lag histogram reports the sampling interval plus the delay, and dashboards and
    // alerts are written for that 10 ms baseline (docs/benchmarks.md, round "lowload").
    collectDefaultMetrics({ register: this.registry });
    this.backgroundResponses(0, 0);
  }

  /** Registers a gauge read at scrape time (CapacityGauges) in this replica's registry. */
  registerCollector(gauge: Gauge): void {
    this.registry.registerMetric(gauge);
  }

  httpRequest(method: string, route: string, status: number, seconds: number): void {
    const labels = { method, route, status: String(status) };
    this.httpRequests.inc(labels);
    this.httpDuration.observe(labels, seconds);
  }

  /** One upstream model call, successful or not. */
  upstreamCall(provider: string, seconds: number, outcome: UpstreamOutcome): void {
    this.upstreamDuration.observe({ provider, outcome }, seconds);
    if (outcome !== 'ok' && outcome !== 'aborted') {
      this.upstreamErrors.inc({ provider, code: outcome });
    }
  }

  /** A target's breaker state, whenever a replica reads or changes it (docs/resilience.md). */
  upstreamBreaker(organizationId: string, target: string, state: 'closed' | 'open' | 'half_open'): void {
    this.breakers.set(
      { organization_id: organizationId, target },
      state === 'closed' ? 0 : state === 'open' ? 1 : 2,
    );
  }

  upstreamClientClosed(): void {
    this.upstreamClientsClosed.inc();
  }

  timeToFirstToken(provider: string, seconds: number): void {
    this.firstToken.observe({ provider }, seconds);
  }

  /** Report a response's count once at its end, or per delta: the counter has no labels. */
  tokensRelayed(count: number): void {
    if (count > 0) this.tokens.inc(count);
  }

  /** A turn's tokens, once when it is written; the label set is bounded (USAGE_LABEL_PAIRS_MAX). */
  usageTokens(
    organizationId: string,
    assistantId: string,
    usage: { inputTokens: number; cachedTokens: number; outputTokens: number; reasoningTokens: number },
  ): void {
    const pair = `${organizationId}/${assistantId}`;
    if (!this.usagePairs.has(pair) && this.usagePairs.size < USAGE_LABEL_PAIRS_MAX) this.usagePairs.add(pair);
    const known = this.usagePairs.has(pair);
    const organization = known ? organizationId : 'other';
    const assistant = known ? assistantId : 'other';
    // Every turn reports: one labels object per type counted, no entries array or spread copies.
    const count = (type: string, tokens: number) => {
      if (tokens > 0) this.usageTokensTotal.inc({ organization, assistant, type }, tokens);
    };
    count('input', usage.inputTokens);
    count('cached', usage.cachedTokens);
    count('output', usage.outputTokens);
    count('reasoning', usage.reasoningTokens);
  }

  streamOpened(): void {
    this.openStreams.inc();
  }

  streamClosed(): void {
    this.openStreams.dec();
  }

  responsesInFlight(count: number): void {
    this.inFlight.set(count);
  }

  rateLimitRejected(): void {
    this.rateLimited.inc();
  }

  rateLimitStoreFailed(): void {
    this.rateLimitStoreErrors.inc();
  }

  backgroundResponses(queued: number, running: number): void {
    this.background.labels('queued').set(queued);
    this.background.labels('running').set(running);
  }

  streamResumed(): void {
    this.resumed.inc();
  }

  leaseExpired(count: number): void {
    this.leaseExpiries.inc(count);
  }

  shed(reason: ShedReason): void {
    this.shedRequests.inc({ reason });
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
