import { ApiError } from '../common/errors/error-catalogue.js';
import type { AppConfig } from '../config/app-config.js';
import type { Metrics } from '../metrics/metrics.service.js';
import { UsageBudgetService } from './usage-budget.service.js';
import type { UsageRepository } from './usage.repository.js';

const ORG = 'org-1';

function setUp(spentByMonth: Record<string, number>, budget: number | null) {
  const reads: string[] = [];
  const repository = {
    budgetAndSpend: (_organizationId: string, monthStart: string) => {
      reads.push(monthStart);
      return Promise.resolve({ budget, spent: spentByMonth[monthStart] ?? 0 });
    },
  } as unknown as UsageRepository;
  const metrics = { usageTokens: () => undefined } as unknown as Metrics;
  const config = { limits: { organizationCacheTtlMs: 60_000 } } as AppConfig;
  return { service: new UsageBudgetService(config, repository, metrics), reads };
}

async function refusal(check: Promise<void>): Promise<ApiError | undefined> {
  try {
    await check;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  return undefined;
}

const spend = (tokens: number) => ({
  organizationId: ORG,
  assistantId: 'a',
  inputTokens: tokens,
  cachedTokens: 0,
  outputTokens: 0,
  reasoningTokens: 0,
});

describe('UsageBudgetService', () => {
  it('refuses once the month is spent, with Retry-After up to the next UTC month, and resets then', async () => {
    const { service, reads } = setUp({ '2026-11-01': 1000 }, 1000);
    const lateNovember = new Date('2026-11-30T23:59:00Z');
    const refused = await refusal(service.check(ORG, lateNovember));
    expect(refused?.code).toBe('token_budget_exceeded');
    expect(refused?.headers['Retry-After']).toBe('60');
    // Within the cache time, but a new month: read again, and the new month has spent nothing.
    await expect(service.check(ORG, new Date('2026-12-01T00:00:01Z'))).resolves.toBeUndefined();
    expect(reads).toEqual(['2026-11-01', '2026-12-01']);
  });

  it("counts this replica's turns at once, between reads of the month's spend", async () => {
    const { service, reads } = setUp({ '2026-11-01': 900 }, 1000);
    const now = new Date('2026-11-10T12:00:00Z');
    await expect(service.check(ORG, now)).resolves.toBeUndefined();
    service.recorded(spend(99), now);
    await expect(service.check(ORG, now)).resolves.toBeUndefined();
    service.recorded(spend(1), now);
    expect((await refusal(service.check(ORG, now)))?.code).toBe('token_budget_exceeded');
    expect(reads).toHaveLength(1);
  });

  it('never refuses an organization without a budget', async () => {
    const { service } = setUp({ '2026-11-01': 10 ** 12 }, null);
    await expect(service.check(ORG, new Date('2026-11-10T12:00:00Z'))).resolves.toBeUndefined();
  });
});
