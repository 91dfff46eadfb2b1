/*
 * The usage report's wire shapes (GET /admin/v1/usage, docs/usage.md), free of any import, so that
 * the web console (console/src/pages/usage-data.ts) reads the very lines the service writes.
 */

/** The integer counts of a line, in the order the report and the console's table and CSV give them. */
export const USAGE_COUNT_NAMES = [
  'turns',
  'input_tokens',
  'cached_tokens',
  'output_tokens',
  'reasoning_tokens',
  'total_tokens',
] as const;

/** The counts of a line, and of the whole report (`total`). */
export interface UsageCounts {
  turns: number;
  input_tokens: number;
  cached_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
  total_tokens: number;
  /** Per currency of the models' price tables; empty when no model of these turns has prices. */
  cost: Record<string, number>;
}

/** One line of the usage report: a period and the values of the chosen dimensions. */
export interface UsageLine extends UsageCounts {
  period: string;
  organization_id?: string;
  /** null for embeddings calls made outside a turn (ingestion, the Search API). */
  assistant_id?: string | null;
  /** `generic` for the assistant's own (generic) agent. */
  specialist?: string;
  /** null for embeddings calls made without an API key (ingestion, file_search in a turn). */
  key_id?: string | null;
  /** null for turns without `x-user-id`. */
  user_id?: string | null;
  /**
   * The upstream model that answered (`offline` for the offline model), or `embeddings:<model>`
   * for embeddings calls; null: not recorded (usage before models were).
   */
  model?: string | null;
}

/** The sum of every line: the range's total, whatever the buckets and grouping. */
export type UsageTotal = UsageCounts;

export interface UsageList {
  object: 'list';
  data: UsageLine[];
  total: UsageTotal;
}
