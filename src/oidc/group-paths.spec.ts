import { claimAt, groupList, organizationsOfGroups } from './group-paths.js';

describe('group paths', () => {
  it('takes the organization from the first segment of each full path, once', () => {
    expect(organizationsOfGroups(['/acme/engineering', '/acme/sales', '/globex'])).toEqual([
      'acme',
      'globex',
    ]);
  });

  it('ignores bare group names and empty paths', () => {
    expect(organizationsOfGroups(['engineering', '/', '//x', ''])).toEqual([]);
  });

  it('reads a claim by exact name first, then by dotted path', () => {
    expect(claimAt({ 'a.b': 1, a: { b: 2 } }, 'a.b')).toBe(1);
    expect(claimAt({ a: { b: ['/x'] } }, 'a.b')).toEqual(['/x']);
    expect(claimAt({ a: ['not', 'an', 'object'] }, 'a.b')).toBeUndefined();
    expect(claimAt({}, 'groups')).toBeUndefined();
  });

  it('accepts a list of strings or a single string as groups, nothing else', () => {
    expect(groupList(['/a', '/b'])).toEqual(['/a', '/b']);
    expect(groupList('/a')).toEqual(['/a']);
    expect(groupList(['/a', 3])).toBeUndefined();
    expect(groupList({ '/a': true })).toBeUndefined();
  });
});
