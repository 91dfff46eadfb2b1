/** `deleted` only with `apply --prune`. */
export type ApplyAction = 'created' | 'updated' | 'unchanged' | 'deleted';

export interface ApplyChange {
  /** e.g. `organization`, `assistant`. */
  kind: string;
  /** How the file names it: `acme`, `acme/Support`. */
  key: string;
  id: string;
  action: ApplyAction;
}

/** What one `apply` did, item by item, in the order the sections ran. */
export class ApplyReport {
  readonly changes: ApplyChange[] = [];

  record(change: ApplyChange): void {
    this.changes.push(change);
  }

  /** Counts by action; `deleted` only for a pruning apply, so other reports keep their shape. */
  summary(pruning = false): Partial<Record<ApplyAction, number>> {
    const counts: Partial<Record<ApplyAction, number>> = { created: 0, updated: 0, unchanged: 0 };
    if (pruning) counts.deleted = 0;
    for (const change of this.changes) counts[change.action] = (counts[change.action] ?? 0) + 1;
    return counts;
  }
}
