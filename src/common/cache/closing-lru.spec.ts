import { ClosingLru } from './closing-lru.js';

describe('ClosingLru', () => {
  it('returns what was added under a key, and nothing for another key', () => {
    const lru = new ClosingLru<string>(2, () => undefined);
    expect(lru.add('a', 'A')).toBe('A');
    expect(lru.get('a')).toBe('A');
    expect(lru.get('b')).toBeUndefined();
  });

  it('closes and drops the least recently used value when a new key would exceed the bound', () => {
    const closed: string[] = [];
    const lru = new ClosingLru<string>(2, (value) => closed.push(value));
    lru.add('a', 'A');
    lru.add('b', 'B');
    lru.get('a'); // a is now the most recent
    lru.add('c', 'C');
    expect(closed).toEqual(['B']);
    expect([...lru.values()]).toEqual(['A', 'C']);
    expect(lru.get('b')).toBeUndefined();
    lru.add('b', 'B2');
    expect(closed).toEqual(['B', 'A']);
    expect(lru.size).toBe(2);
  });
});
