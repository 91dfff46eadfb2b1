import { byTime, KeysetOrder, keysetPage } from './keyset.js';

describe('KeysetOrder', () => {
  const newestFirst = byTime('created_at', 'id', 'DESC');
  const oldestFirst = new KeysetOrder(
    { sql: 'b.depth', type: 'integer' },
    { sql: 'm.position', type: 'integer' },
    'ASC',
  );

  it('orders by the sort column, then the tie-breaker, in one direction', () => {
    expect(newestFirst.orderBy).toBe('created_at DESC, id DESC');
    expect(oldestFirst.orderBy).toBe('b.depth ASC, m.position ASC');
  });

  it('compares the row value with the cursor in the direction of the order, or passes all without one', () => {
    expect(newestFirst.after(4)).toBe('($5::uuid IS NULL OR (created_at, id) < ($4::timestamptz, $5::uuid))');
    expect(oldestFirst.after(2)).toBe(
      '($3::integer IS NULL OR (b.depth, m.position) > ($2::integer, $3::integer))',
    );
  });
});

describe('keysetPage', () => {
  it('shows `limit` rows and names the last one when the extra row says more follow', () => {
    expect(keysetPage([1, 2, 3], 2)).toEqual({ items: [1, 2], next: 2 });
  });

  it('has no next row on the last page', () => {
    expect(keysetPage([1, 2], 2)).toEqual({ items: [1, 2], next: null });
    expect(keysetPage([], 2)).toEqual({ items: [], next: null });
  });
});
