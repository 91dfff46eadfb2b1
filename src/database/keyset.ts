/**
 * Keyset pagination, for lists paged with an opaque `after` cursor: a page is the rows strictly
 * after the last row the previous page showed, in the list's order. The order is a sort column
 * then a column that breaks its ties, so every position is exact and an index serves the page
 * however deep it is (unlike OFFSET). Pages are read with one row more than asked: that row only
 * tells whether another page exists.
 */
export interface KeysetColumn {
  /** The column as the query names it (`updated_at`, `m.position`). */
  sql: string;
  /** Its PostgreSQL type, for the cast of the cursor's parameter. */
  type: string;
}

export class KeysetOrder {
  constructor(
    private readonly sort: KeysetColumn,
    private readonly tieBreak: KeysetColumn,
    private readonly direction: 'ASC' | 'DESC',
  ) {}

  /** `ORDER BY` of the list (without the keywords). */
  get orderBy(): string {
    return `${this.sort.sql} ${this.direction}, ${this.tieBreak.sql} ${this.direction}`;
  }

  /**
   * The condition "after the cursor", true for every row when there is none: the cursor's two
   * values are the parameters `$first` and `$first + 1` (both null for the first page).
   */
  after(first: number): string {
    const sortParam = `$${first}::${this.sort.type}`;
    const tieParam = `$${first + 1}::${this.tieBreak.type}`;
    const comparison = this.direction === 'DESC' ? '<' : '>';
    return `(${tieParam} IS NULL OR (${this.sort.sql}, ${this.tieBreak.sql}) ${comparison} (${sortParam}, ${tieParam}))`;
  }
}

/** The usual list order: a timestamp, its ties broken by the row's uuid. */
export function byTime(time: string, id: string, direction: 'ASC' | 'DESC'): KeysetOrder {
  return new KeysetOrder({ sql: time, type: 'timestamptz' }, { sql: id, type: 'uuid' }, direction);
}

/** Both directions of `byTime`, for lists whose `order` the caller picks. */
export function byTimeEitherWay(time: string, id: string): Record<'asc' | 'desc', KeysetOrder> {
  return { asc: byTime(time, id, 'ASC'), desc: byTime(time, id, 'DESC') };
}

/** The rows to show of `limit + 1` read, and the last shown when another page follows. */
export function keysetPage<Row>(rows: Row[], limit: number): { items: Row[]; next: Row | null } {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, next: rows.length > limit && last !== undefined ? last : null };
}
