import { filterToSql, parseAttributeFilter } from './attribute-filter.js';

describe('attribute filters', () => {
  it('compiles comparisons and compounds with every value bound', () => {
    const params: unknown[] = [];
    const filter = parseAttributeFilter({
      type: 'and',
      filters: [
        { type: 'eq', key: 'team', value: 'hr' },
        {
          type: 'or',
          filters: [
            { type: 'gte', key: 'year', value: 2024 },
            { type: 'in', key: 'tag', value: ['a', 1] },
          ],
        },
      ],
    });
    const sql = filterToSql(filter, 'f.attributes', params);
    expect(sql).not.toContain('hr');
    expect(sql).toContain(' AND ');
    expect(sql).toContain(' OR ');
    expect(params).toEqual(['team', '"hr"', 'year', 2024, '["a",1]', 'tag']);
  });

  it('refuses malformed filters by name', () => {
    expect(() => parseAttributeFilter({ type: 'like', key: 'a', value: 'b' })).toThrow(/filters.type/);
    expect(() => parseAttributeFilter({ type: 'and', filters: [] })).toThrow(/filters.filters/);
    expect(() => parseAttributeFilter({ type: 'in', key: 'a', value: 'b' })).toThrow(/filters.value/);
    expect(() => parseAttributeFilter({ type: 'gt', key: 'a', value: true })).toThrow(/booleans/);
    expect(() => parseAttributeFilter({ type: 'eq', value: 1 })).toThrow(/filters.key/);
  });
});
