import { useState } from 'preact/hooks';
import { get, type List } from '../api';
import type { Organization } from '../main';
import { Empty, ErrorNote, Field, Loading, Page, formatNumber, useLoad } from '../ui';
import { UsageChart } from './usage-chart';
import {
  COUNTS,
  DIMENSIONS,
  dimensionValue,
  firstOfMonth,
  formatCost,
  today,
  usageCsv,
  type UsageLine,
} from './usage-data';

interface Filters {
  from: string;
  to: string;
  period: 'day' | 'month';
  groupBy: string;
}

/**
 * Usage and cost of one organization (GET …/organizations/{org}/usage). Every number shown is one
 * the API returned: the grouped table, the chart (ungrouped lines) and the total (a separate
 * ungrouped `period=month` query) are three reads, none summed in the browser beyond adding the
 * integer lines of a range that spans several months.
 */
export function UsagePage({ org }: { org: Organization }) {
  const path = `/admin/v1/organizations/${encodeURIComponent(org.slug)}/usage`;
  const [draft, setDraft] = useState<Filters>({
    from: firstOfMonth(),
    to: today(),
    period: 'day',
    groupBy: 'assistant',
  });
  const [filters, setFilters] = useState<Filters>(draft);
  const query = { from: filters.from, to: filters.to };
  const grouped = useLoad(
    () =>
      get<List<UsageLine>>(path, {
        ...query,
        period: filters.period,
        group_by: filters.groupBy || undefined,
      }),
    [path, filters],
  );
  const series = useLoad(
    () => get<List<UsageLine>>(path, { ...query, period: filters.period }),
    [path, filters],
  );
  const totals = useLoad(() => get<List<UsageLine>>(path, { ...query, period: 'month' }), [path, filters]);
  const month = useLoad(
    () => get<List<UsageLine>>(path, { from: firstOfMonth(), to: today(), period: 'month' }),
    [path],
  );
  const dimensions = filters.groupBy ? filters.groupBy.split(',') : [];
  const total = sumLines(totals.data?.data ?? []);
  const spent = month.data?.data[0]?.total_tokens ?? 0;
  const exportCsv = () => {
    const blob = new Blob([usageCsv(grouped.data?.data ?? [], dimensions)], { type: 'text/csv' });
    const link = document.createElement('a');
    link.href = URL.createObjectURL(blob);
    link.download = `usage-${org.slug}-${filters.from}-${filters.to}.csv`;
    link.click();
    URL.revokeObjectURL(link.href);
  };
  return (
    <Page
      title={`Usage and cost of ${org.name}`}
      actions={
        <button type="button" onClick={exportCsv} disabled={!grouped.data}>
          Export CSV
        </button>
      }
    >
      <form
        class="panel filters"
        aria-label="Usage filters"
        onSubmit={(event) => {
          event.preventDefault();
          setFilters(draft);
        }}
      >
        <Field id="usage-from" label="From (UTC day)">
          <input
            id="usage-from"
            type="date"
            required
            value={draft.from}
            onInput={(e) => setDraft({ ...draft, from: e.currentTarget.value })}
          />
        </Field>
        <Field id="usage-to" label="To (UTC day)">
          <input
            id="usage-to"
            type="date"
            required
            value={draft.to}
            onInput={(e) => setDraft({ ...draft, to: e.currentTarget.value })}
          />
        </Field>
        <Field id="usage-period" label="Buckets">
          <select
            id="usage-period"
            value={draft.period}
            onChange={(e) => setDraft({ ...draft, period: e.currentTarget.value as Filters['period'] })}
          >
            <option value="day">Daily</option>
            <option value="month">Monthly</option>
          </select>
        </Field>
        <Field id="usage-group" label="Group by">
          <select
            id="usage-group"
            value={draft.groupBy}
            onChange={(e) => setDraft({ ...draft, groupBy: e.currentTarget.value })}
          >
            <option value="">Nothing (totals)</option>
            {DIMENSIONS.map((dimension) => (
              <option key={dimension} value={dimension}>
                {dimension}
              </option>
            ))}
            <option value="assistant,user">assistant and user</option>
          </select>
        </Field>
        <button type="submit">Show</button>
      </form>
      <div class="cards">
        <Card label="Turns" value={formatNumber(total.turns)} testId="total-turns" />
        <Card label="Total tokens" value={formatNumber(total.total_tokens)} testId="total-tokens" />
        <Card label="Cost" value={formatCost(total.cost)} testId="total-cost" />
        <Card
          label="Monthly budget left"
          testId="budget-left"
          value={
            org.monthlyTokenBudget === null
              ? 'No budget'
              : `${formatNumber(Math.max(0, org.monthlyTokenBudget - spent))} of ${formatNumber(org.monthlyTokenBudget)}`
          }
        />
      </div>
      <ErrorNote error={grouped.error ?? series.error ?? totals.error} />
      <Loading when={grouped.loading} />
      <UsageChart lines={series.data?.data ?? []} />
      <Empty when={grouped.data?.data.length === 0}>No usage in this range.</Empty>
      {grouped.data?.data.length ? (
        <table data-testid="usage-table">
          <caption class="sr-only">Usage lines</caption>
          <thead>
            <tr>
              <th scope="col">Period</th>
              {dimensions.map((dimension) => (
                <th scope="col" key={dimension}>
                  {dimension}
                </th>
              ))}
              {COUNTS.map((count) => (
                <th scope="col" key={count} class="num">
                  {count.replace('_', ' ')}
                </th>
              ))}
              <th scope="col">Cost</th>
            </tr>
          </thead>
          <tbody>
            {grouped.data.data.map((line, index) => (
              <tr key={index}>
                <td>{line.period}</td>
                {dimensions.map((dimension) => (
                  <td key={dimension}>
                    <code>{dimensionValue(line, dimension)}</code>
                  </td>
                ))}
                {COUNTS.map((count) => (
                  <td key={count} class="num">
                    {formatNumber(line[count])}
                  </td>
                ))}
                <td>{formatCost(line.cost)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </Page>
  );
}

function Card(props: { label: string; value: string; testId: string }) {
  return (
    <div class="card">
      <span class="muted">{props.label}</span>
      <strong data-testid={props.testId}>{props.value}</strong>
    </div>
  );
}

/** One month: the API's line as is. Several: integers add exactly; costs per currency, rounded to 1e-9. */
function sumLines(lines: UsageLine[]): Pick<UsageLine, 'turns' | 'total_tokens' | 'cost'> {
  if (lines.length === 1) return lines[0];
  const cost: Record<string, number> = {};
  for (const line of lines) {
    for (const [currency, value] of Object.entries(line.cost))
      cost[currency] = Math.round(((cost[currency] ?? 0) + value) * 1e9) / 1e9;
  }
  return {
    turns: lines.reduce((sum, line) => sum + line.turns, 0),
    total_tokens: lines.reduce((sum, line) => sum + line.total_tokens, 0),
    cost,
  };
}
