// The API's own wire shapes (a file without imports: nothing else of the service reaches the bundle).
import { USAGE_COUNT_NAMES, type UsageLine, type UsageList } from '../../../src/usage/usage-line.js';

export type { UsageLine, UsageList };

export const DIMENSIONS = ['organization', 'assistant', 'specialist', 'key', 'user', 'model'] as const;
export const COUNTS = USAGE_COUNT_NAMES;

/** What a line without a value of the dimension shows (embeddings calls have no assistant or key). */
const ABSENT: Record<string, string> = { model: '(not recorded)', assistant: '(none)', key: '(none)' };

export function dimensionValue(line: UsageLine, dimension: string): string {
  return cell(line, dimension) ?? ABSENT[dimension] ?? '(anonymous)';
}

/** The field of a dimension in a line: `specialist` and `model` as named, else `<dimension>_id`. */
function field(dimension: string): string {
  return dimension === 'specialist' || dimension === 'model' ? dimension : `${dimension}_id`;
}

/** A grouped dimension's value in a line; null when absent. */
function cell(line: UsageLine, dimension: string): string | null {
  const value = (line as unknown as Record<string, unknown>)[field(dimension)];
  return typeof value === 'string' ? value : null;
}

function csvCell(value: string | number): string {
  const text = String(value);
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The API's lines as CSV, one column per count and per currency; values exactly as received. */
export function usageCsv(lines: UsageLine[], dimensions: string[]): string {
  const currencies = [...new Set(lines.flatMap((line) => Object.keys(line.cost)))].sort();
  const header = ['period', ...dimensions.map(field), ...COUNTS];
  header.push(...currencies.map((currency) => `cost_${currency}`));
  const rows = lines.map((line) => [
    line.period,
    ...dimensions.map((dimension) => cell(line, dimension) ?? ''),
    ...COUNTS.map((count) => line[count]),
    ...currencies.map((currency) => (line.cost[currency] === undefined ? '' : line.cost[currency])),
  ]);
  return [header, ...rows].map((row) => row.map(csvCell).join(',')).join('\r\n') + '\r\n';
}

export function today(): string {
  return new Date().toISOString().slice(0, 10);
}

export function firstOfMonth(): string {
  return today().slice(0, 8) + '01';
}

export function formatCost(cost: Record<string, number>): string {
  const entries = Object.entries(cost);
  return entries.length === 0 ? '—' : entries.map(([currency, value]) => `${value} ${currency}`).join(', ');
}
