import { useState } from 'preact/hooks';
import { get, url } from '../api';
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
  type UsageList,
} from './usage-data';

interface Filters {
  from: string;
  to: string;
  period: 'hour' | 'day' | 'month';
  groupBy: string;
}

/**
 * Usage and cost of one organization (GET …/organizations/{org}/usage). Every number shown is one
 * the API returned, none added up in the browser: the grouped table and the totals (the answer's
 * `total`) are one read, the chart (ungrouped lines, one per bucket) another, the budget left a
 * third (this month's `total`).
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
  const grouped = useLoad(async () => {
    const params = { ...query, period: filters.period, group_by: filters.groupBy || undefined };
    // The answer keeps the query it answers, so what is on screen says which one it shows.
    return { ...(await get<UsageList>(path, params)), query: url(path, params).search.slice(1) };
  }, [path, filters]);
  const series = useLoad(async () => {
    const params = { ...query, period: filters.period };
    return { ...(await get<UsageList>(path, params)), query: url(path, params).search.slice(1) };
  }, [path, filters]);
  const month = useLoad(
    () => get<UsageList>(path, { from: firstOfMonth(), to: today(), period: 'month' }),
    [path],
  );
  const dimensions = filters.groupBy ? filters.groupBy.split(',') : [];
  const total = grouped.data?.total;
  const spent = month.data?.total.total_tokens ?? 0;
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
            <option value="hour">Hourly (31 days at most)</option>
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
        <Card label="Turns" value={total ? formatNumber(total.turns) : '…'} testId="total-turns" />
        <Card
          label="Total tokens"
          value={total ? formatNumber(total.total_tokens) : '…'}
          testId="total-tokens"
        />
        <Card label="Cost" value={total ? formatCost(total.cost) : '…'} testId="total-cost" />
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
      <ErrorNote error={grouped.error ?? series.error} />
      <Loading when={grouped.loading} />
      <UsageChart lines={series.data?.data ?? []} query={series.data?.query} />
      <Empty when={grouped.data?.data.length === 0}>No usage in this range.</Empty>
      {grouped.data?.data.length ? (
        <table data-testid="usage-table" data-query={grouped.data.query}>
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
