import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { TurnUsageRow } from '../turns/turn.types.js';

export type UsageDimension = 'organization' | 'assistant' | 'specialist' | 'key' | 'user' | 'model';
export type UsagePeriod = 'hour' | 'day' | 'month';

/** The column of each dimension: the only names that reach the SQL text. */
const DIMENSION_COLUMNS: Record<UsageDimension, string> = {
  organization: 'organization_id::text',
  assistant: 'assistant_id::text',
  specialist: 'specialist',
  key: 'api_key_id::text',
  user: 'user_id',
  model: 'model',
};

/** Each bucket's label, from the UTC hour (ISO 8601 for hours). */
const PERIOD_LABELS: Record<UsagePeriod, string> = {
  hour: `to_char(hour AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24":00:00Z"')`,
  day: `to_char(hour AT TIME ZONE 'UTC', 'YYYY-MM-DD')`,
  month: `to_char(hour AT TIME ZONE 'UTC', 'YYYY-MM')`,
};

/**
 * The hourly rollup's rows and the turns still in `usage_pending` (every replica's), in the same
 * columns: the flush moves a turn from one to the other in one statement, so one statement's
 * snapshot sees each stored turn once, and nothing waits for a flush.
 */
const HOURLY_AND_PENDING = `SELECT hour, organization_id, assistant_id, specialist, api_key_id, user_id, model, currency,
         turns, input_tokens, cached_tokens, output_tokens, reasoning_tokens, cost
    FROM usage_hourly
  UNION ALL
  SELECT date_trunc('hour', p.completed_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', p.organization_id,
         p.assistant_id, p.specialist, p.api_key_id, p.user_id, coalesce(r.model, ''), r.currency, r.turns,
         r.input_tokens, r.cached_tokens, r.output_tokens, r.reasoning_tokens, r.cost
    FROM usage_pending p, jsonb_to_recordset(p.usage_rows) AS r(model varchar, currency varchar, turns bigint,
         input_tokens bigint, cached_tokens bigint, output_tokens bigint, reasoning_tokens bigint, cost numeric)`;

export interface UsageFilter {
  /** Null: every organization (platform administrators only). */
  organizationId: string | null;
  from: string;
  to: string;
  period: UsagePeriod;
  groupBy: UsageDimension[];
  assistantId: string | null;
  userId: string | null;
}

/** One period's totals per currency: the same counts the turn store upserts (TurnUsageRow). */
export interface UsageSumRow extends TurnUsageRow {
  period: string;
  dimensions: Partial<Record<UsageDimension, string>>;
}

/**
 * Reads the usage rollups, which only the flush (UsageRollups) adds to, with the turns still
 * pending: the report from the hourly one (`usage_hourly`: every bucket size sums the same rows, so
 * hours add up to days and days to months exactly), the budget from the daily one. Every query
 * names the organization unless a platform administrator asks for all.
 */
@Injectable()
export class UsageRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Sums by period, the chosen dimensions and currency, ordered by period then dimensions: rolled
   * up and pending turns alike (HOURLY_AND_PENDING), the filters applied to both.
   */
  async sums(filter: UsageFilter): Promise<UsageSumRow[]> {
    const params: unknown[] = [filter.from, filter.to];
    // Inclusive UTC days: from midnight of `from` to (not including) midnight after `to`.
    const where = [
      `hour >= $1::date::timestamp AT TIME ZONE 'UTC'`,
      `hour < ($2::date + 1)::timestamp AT TIME ZONE 'UTC'`,
    ];
    const add = (sql: string, value: unknown) => {
      params.push(value);
      where.push(`${sql} = $${params.length}`);
    };
    if (filter.organizationId !== null) add('organization_id', filter.organizationId);
    if (filter.assistantId !== null) add('assistant_id', filter.assistantId);
    if (filter.userId !== null) add('user_id', filter.userId);
    const period = PERIOD_LABELS[filter.period];
    const dimensions = filter.groupBy.map(
      (dimension, index) => `${DIMENSION_COLUMNS[dimension]} AS d${index}`,
    );
    const groups = ['1', ...filter.groupBy.map((_, index) => String(index + 2)), 'currency'];
    const rows = await this.dataSource.query<Record<string, string>[]>(
      `SELECT ${[`${period} AS period`, ...dimensions].join(', ')}, currency,
              sum(turns)::text AS turns, sum(input_tokens)::text AS input_tokens,
              sum(cached_tokens)::text AS cached_tokens, sum(output_tokens)::text AS output_tokens,
              sum(reasoning_tokens)::text AS reasoning_tokens, sum(cost)::text AS cost
         FROM (${HOURLY_AND_PENDING}) u
        WHERE ${where.join(' AND ')}
        GROUP BY ${groups.join(', ')}
        ORDER BY ${groups.join(', ')}`,
      params,
    );
    return rows.map((row) => ({
      period: row.period,
      dimensions: Object.fromEntries(filter.groupBy.map((dimension, index) => [dimension, row[`d${index}`]])),
      currency: row.currency,
      turns: Number(row.turns),
      inputTokens: Number(row.input_tokens),
      cachedTokens: Number(row.cached_tokens),
      outputTokens: Number(row.output_tokens),
      reasoningTokens: Number(row.reasoning_tokens),
      cost: Number(row.cost),
    }));
  }

  /**
   * The organization's monthly token budget and the tokens (input + output) it spent since
   * `monthStart`, in one statement; null when the organization does not exist. The spend is the
   * month's rollup rows plus its turns still in `usage_pending` (any replica's): the flush moves
   * a turn from one to the other in one statement, so this statement's snapshot sees each turn
   * once, and nothing waits for a flush. Without a budget, nothing is summed.
   */
  async budgetAndSpend(
    organizationId: string,
    monthStart: string,
  ): Promise<{ budget: number | null; spent: number } | null> {
    const [row] = await this.dataSource.query<{ budget: string | null; spent: string }[]>(
      `SELECT o.monthly_token_budget::text AS budget,
              CASE WHEN o.monthly_token_budget IS NULL THEN '0' ELSE (
                (SELECT coalesce(sum(u.input_tokens + u.output_tokens), 0)
                   FROM usage_daily u
                  WHERE u.organization_id = o.id AND u.day >= $2::date)
                + (SELECT coalesce(sum(r.input_tokens + r.output_tokens), 0)
                     FROM usage_pending p,
                          jsonb_to_recordset(p.usage_rows) AS r(input_tokens bigint, output_tokens bigint)
                    WHERE p.organization_id = o.id AND p.completed_at >= $2::date::timestamp AT TIME ZONE 'UTC')
              )::text END AS spent
         FROM organizations o WHERE o.id = $1`,
      [organizationId, monthStart],
    );
    if (!row) return null;
    return { budget: row.budget === null ? null : Number(row.budget), spent: Number(row.spent) };
  }
}
