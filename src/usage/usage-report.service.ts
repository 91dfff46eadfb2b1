import { Injectable } from '@nestjs/common';
import type { UsageQuery } from './dto/usage-query.dto.js';
import { UsageRepository, type UsageDimension, type UsageSumRow } from './usage.repository.js';

/** One line of the usage report: a period and the values of the chosen dimensions. */
export interface UsageLine {
  period: string;
  organization_id?: string;
  assistant_id?: string;
  /** `generic` for the assistant's own (generic) agent. */
  specialist?: string;
  key_id?: string;
  /** null for turns without `x-user-id`. */
  user_id?: string | null;
  /** The upstream model that answered (`offline` for the offline model); null: not recorded (usage before models were). */
  model?: string | null;
  turns: number;
  input_tokens: number;
  cached_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  total_tokens: number;
  /** Per currency of the models' price tables; empty when no model of these turns has prices. */
  cost: Record<string, number>;
}

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

  /** Usage of one organization (or of all, for `null`) by period and the chosen dimensions. */
  async report(organizationId: string | null, query: UsageQuery): Promise<UsageLine[]> {
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
      line.turns += row.turns;
      line.input_tokens += row.inputTokens;
      line.cached_tokens += row.cachedTokens;
      line.output_tokens += row.outputTokens;
      line.reasoning_tokens += row.reasoningTokens;
      line.total_tokens += row.inputTokens + row.outputTokens;
      if (row.currency !== '') line.cost[row.currency] = (line.cost[row.currency] ?? 0) + row.cost;
    }
    return [...lines.values()];
  }
}

function newLine(row: UsageSumRow, groupBy: UsageDimension[]): UsageLine {
  const line: UsageLine = {
    period: row.period,
    turns: 0,
    input_tokens: 0,
    cached_tokens: 0,
    output_tokens: 0,
    reasoning_tokens: 0,
    total_tokens: 0,
    cost: {},
  };
  for (const dimension of groupBy) {
    const value = row.dimensions[dimension] ?? '';
    const shown =
      dimension === 'assistant'
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
