import { Inject, Injectable } from '@nestjs/common';
import { ApiError } from '../common/errors/error-catalogue.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { Metrics } from '../metrics/metrics.service.js';
import { UsageRepository } from './usage.repository.js';

/** What one finished turn spent, as its write recorded it. */
export interface TurnSpend {
  organizationId: string;
  assistantId: string;
  inputTokens: number;
  cachedTokens: number;
  outputTokens: number;
  reasoningTokens: number;
}

interface CachedBudget {
  /** `YYYY-MM` (UTC) the spend was read for: a new month reads again, so budgets reset at once. */
  month: string;
  state: Promise<{ budget: number | null; spent: number } | null>;
  /** Tokens this replica's turns spent since the read; the next read includes them. */
  sinceRead: number;
  expiresAt: number;
}

const MAX_CACHED_ORGANIZATIONS = 10_000;

/**
 * Monthly token budgets per organization (`monthly_token_budget`, input + output tokens per UTC
 * calendar month). The check before a turn reads the budget and the month's spend once per
 * RATE_LIMIT_CACHE_SECONDS per organization and replica (concurrent misses share the query), and
 * adds what this replica's turns spent since. The read counts every stored turn of every replica,
 * rolled up or still pending, in one statement, without waiting for a flush; other replicas'
 * turns stored after it count at the next read. A turn already running finishes, so a budget can
 * be overrun by the turns in flight when it runs out.
 */
@Injectable()
export class UsageBudgetService {
  private readonly cache = new Map<string, CachedBudget>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly repository: UsageRepository,
    private readonly metrics: Metrics,
  ) {}

  /** Throws 429 `token_budget_exceeded` (Retry-After: until the next UTC month) when spent. */
  async check(organizationId: string, now = new Date()): Promise<void> {
    const entry = this.entryFor(organizationId, now);
    const state = await entry.state;
    if (!state || state.budget === null) return;
    const spent = state.spent + entry.sinceRead;
    if (spent < state.budget) return;
    const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
    const retryAfter = Math.max(1, Math.ceil((next - now.getTime()) / 1000));
    throw new ApiError(
      'token_budget_exceeded',
      `This organization's monthly budget of ${state.budget} tokens is spent; it resets on ${new Date(next).toISOString().slice(0, 10)} (UTC)`,
      { 'Retry-After': String(retryAfter) },
    );
  }

  /** After a turn's write: its tokens count against the budget here at once, and in the metrics. */
  recorded(spend: TurnSpend, now = new Date()): void {
    this.metrics.usageTokens(spend.organizationId, spend.assistantId, spend);
    this.spent(spend.organizationId, spend.inputTokens + spend.outputTokens, now);
  }

  /** Tokens spent outside a turn (embeddings calls): they count against the budget here at once. */
  spent(organizationId: string, tokens: number, now = new Date()): void {
    const entry = this.cache.get(organizationId);
    if (entry && entry.month === monthOf(now)) entry.sinceRead += tokens;
  }

  private entryFor(organizationId: string, now: Date): CachedBudget {
    const month = monthOf(now);
    const cached = this.cache.get(organizationId);
    if (cached && cached.month === month && cached.expiresAt > now.getTime()) return cached;
    // Rolled-up and pending usage in one snapshot: exact without waiting for a flush (which a lock
    // on usage_pending or a slow database could hold up). A turn recorded while the read runs may
    // count twice until the next read (in the read and in `sinceRead`), never not at all.
    const state = this.repository.budgetAndSpend(organizationId, `${month}-01`);
    if (this.cache.size >= MAX_CACHED_ORGANIZATIONS) this.cache.clear();
    const entry: CachedBudget = {
      month,
      state,
      sinceRead: 0,
      expiresAt: now.getTime() + this.config.limits.organizationCacheTtlMs,
    };
    this.cache.set(organizationId, entry);
    // A failed read is not remembered; the request fails and the next one asks again.
    state.catch(() => {
      if (this.cache.get(organizationId) === entry) this.cache.delete(organizationId);
    });
    return entry;
  }
}

/** The last month named, with its bounds: every turn asks twice, and months change rarely. */
let lastMonth = { from: 0, to: 0, name: '' };

function monthOf(date: Date): string {
  const time = date.getTime();
  if (time >= lastMonth.from && time < lastMonth.to) return lastMonth.name;
  const from = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
  const to = Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
  lastMonth = { from, to, name: date.toISOString().slice(0, 7) };
  return lastMonth.name;
}
