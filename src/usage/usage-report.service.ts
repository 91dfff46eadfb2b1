import { Injectable } from '@nestjs/common';
import type { UsageQuery } from './dto/usage-query.dto.js';
import { NO_ID } from './embedding-usage.repository.js';
import { USAGE_COUNT_NAMES, type UsageCounts, type UsageLine, type UsageList } from './usage-line.js';
import { UsageRepository, type UsageDimension, type UsageSumRow } from './usage.repository.js';

const OUTPUT_NAMES: Record<UsageDimension, keyof UsageLine> = {
  organization: 'organization_id',
  assistant: 'assistant_id',
  specialist: 'specialist',
  key: 'key_id',
  user: 'user_id',
  model: 'model',
};

@Injectable()
export class UsageReportService {
  constructor(private readonly repository: UsageRepository) {}

  /** The report as the API answers it: the lines, and their total over the whole range. */
  async list(organizationId: string | null, query: UsageQuery): Promise<UsageList> {
    // Pending turns are read with the rollups, every replica's, in one statement: no flush first,
    // which a lock on usage_pending or a slow database could hold up (docs/usage.md, "Freshness").
    const data = await this.report(organizationId, query);
    return { object: 'list', data, total: totalOf(data) };
  }

  /** Usage of one organization (or of all, for `null`) by period and the chosen dimensions. */
  private async report(organizationId: string | null, query: UsageQuery): Promise<UsageLine[]> {
    const rows = await this.repository.sums({ organizationId, ...query });
    const lines = new Map<string, UsageLine>();
    for (const row of rows) {
      const key = JSON.stringify([
        row.period,
        ...query.groupBy.map((dimension) => row.dimensions[dimension]),
      ]);
      let line = lines.get(key);
      if (!line) {
        line = newLine(row, query.groupBy);
        lines.set(key, line);
      }
      addCounts(line, {
        turns: row.turns,
        input_tokens: row.inputTokens,
        cached_tokens: row.cachedTokens,
        output_tokens: row.outputTokens,
        reasoning_tokens: row.reasoningTokens,
        total_tokens: row.inputTokens + row.outputTokens,
        cost: row.currency === '' ? {} : { [row.currency]: row.cost },
      });
    }
    return [...lines.values()];
  }
}

const noCounts = (): UsageCounts => ({
  turns: 0,
  input_tokens: 0,
  cached_tokens: 0,
  output_tokens: 0,
  reasoning_tokens: 0,
  total_tokens: 0,
  cost: {},
});

/** Adds counts into `target`: integers exactly, costs per currency rounded to the rollup's 8 decimals. */
function addCounts(target: UsageCounts, counts: UsageCounts): void {
  for (const name of USAGE_COUNT_NAMES) target[name] += counts[name];
  for (const [currency, cost] of Object.entries(counts.cost)) {
    target.cost[currency] = Math.round(((target.cost[currency] ?? 0) + cost) * 1e8) / 1e8;
  }
}

function newLine(row: UsageSumRow, groupBy: UsageDimension[]): UsageLine {
  const line: UsageLine = { period: row.period, ...noCounts() };
  for (const dimension of groupBy) {
    const value = row.dimensions[dimension] ?? '';
    // Embeddings calls made without an assistant or key (docs/usage.md "Embeddings") show none.
    const shown =
      (dimension === 'assistant' || dimension === 'key') && value === NO_ID
        ? null
        : dimension === 'assistant'
          ? `asst_${value}`
          : dimension === 'specialist'
            ? value || 'generic'
            : dimension === 'user' || dimension === 'model'
              ? value || null
              : value;
    Object.assign(line, { [OUTPUT_NAMES[dimension]]: shown });
  }
  return line;
}

/** The lines' sum, so that a client shows the API's total instead of adding lines itself. */
function totalOf(lines: UsageLine[]): UsageCounts {
  const total = noCounts();
  for (const line of lines) addCounts(total, line);
  return total;
}
