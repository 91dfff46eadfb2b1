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

  summary(): Record<ApplyAction, number> {
    const counts = { created: 0, updated: 0, unchanged: 0, deleted: 0 };
    for (const change of this.changes) counts[change.action] += 1;
    return counts;
  }
}
