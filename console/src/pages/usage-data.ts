/** One line of GET /admin/v1/usage (docs/usage.md), as the API gives it. */
export interface UsageLine {
  period: string;
  organization_id?: string;
  assistant_id?: string;
  specialist?: string;
  key_id?: string;
  user_id?: string | null;
  turns: number;
  input_tokens: number;
  cached_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  total_tokens: number;
  cost: Record<string, number>;
}

export const DIMENSIONS = ['organization', 'assistant', 'specialist', 'key', 'user'] as const;
export const COUNTS = [
  'turns',
  'input_tokens',
  'cached_tokens',
  'output_tokens',
  'reasoning_tokens',
  'total_tokens',
] as const;

export function dimensionValue(line: UsageLine, dimension: string): string {
  return cell(line, dimension) ?? '(anonymous)';
}

/** A grouped dimension's value in a line: `specialist`, or `<dimension>_id`; null when absent. */
function cell(line: UsageLine, dimension: string): string | null {
  const value = (line as unknown as Record<string, unknown>)[
    dimension === 'specialist' ? dimension : `${dimension}_id`
  ];
  return typeof value === 'string' ? value : null;
}

function csvCell(value: string | number): string {
  const text = String(value);
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The API's lines as CSV, one column per count and per currency; values exactly as received. */
export function usageCsv(lines: UsageLine[], dimensions: string[]): string {
  const currencies = [...new Set(lines.flatMap((line) => Object.keys(line.cost)))].sort();
  const header = ['period', ...dimensions.map((d) => (d === 'specialist' ? d : `${d}_id`)), ...COUNTS];
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
