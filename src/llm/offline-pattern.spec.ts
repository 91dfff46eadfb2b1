import { compilePattern, MAX_TESTED_CHARACTERS, PatternError, patternMatches } from './offline-pattern.js';

const test = (pattern: string, text: string) => patternMatches(compilePattern(pattern), text);

describe('offline script patterns', () => {
  it('agrees with JavaScript regular expressions (case-insensitive) on the subset', () => {
    const patterns = [
      '.',
      '.+',
      'weather',
      'weather in (\\w+)',
      '^(hi|hello|hey)\\b',
      '^ping$',
      '^p[a-z]ng$',
      '[^a-z]',
      'a{2,3}b',
      'a{2}$',
      'x*y?z+',
      '(?:ab|cd)+e',
      '\\d{3}-\\d{4}',
      '\\bcat\\B',
      '\\s\\S',
      'c\\.d',
      '[\\w-]+@',
      '^$',
      'a|',
      '[]',
      'é',
      '{',
    ];
    const texts = [
      '',
      'ping',
      'PING',
      'ping pong',
      'Hello there',
      'hiya',
      'hi!',
      'Weather in Paris?',
      'aab',
      'aaaab',
      'aa',
      'xyzz',
      'abcdabe',
      '555-1234',
      'cats',
      'cat ',
      'c.d',
      'cxd',
      'a-b@c',
      'É',
      'a\nb',
      '{x}',
      '123',
    ];
    for (const pattern of patterns) {
      const expected = new RegExp(pattern, 'i');
      for (const text of texts) {
        expect({ pattern, text, matches: test(pattern, text) }).toEqual({
          pattern,
          text,
          matches: expected.test(text),
        });
      }
    }
  });

  it('answers a catastrophic-backtracking pattern on hostile input at once', () => {
    const hostile = `${'a'.repeat(100_000)}!`;
    // The JavaScript engine would take longer than the age of the universe here.
    expect(test('^(a+)+$', hostile)).toBe(false);
    expect(test('(a|aa)*b', hostile)).toBe(false);
    expect(test('^(a+)+$', 'aaaa')).toBe(true);
  });

  it('tests only the first characters of a long input; `$` then never matches', () => {
    const long = `${'x'.repeat(MAX_TESTED_CHARACTERS)}needle`;
    expect(test('needle', long)).toBe(false);
    expect(test('x$', long)).toBe(false);
    expect(test('^x', long)).toBe(true);
  });

  it.each([
    ['(a)\\1', '\\1'],
    ['(?=a)', 'lookaround'],
    ['(?<name>a)', 'lookaround'],
    ['\\p{L}', '\\p'],
    ['\\u0041', '\\u'],
    ['a**', 'two quantifiers'],
    ['*a', 'nothing to repeat'],
    ['^*', 'anchor'],
    ['(a', 'unterminated group'],
    ['a)', 'unmatched'],
    ['[a', 'unterminated character class'],
    ['[z-a]', 'out of order'],
    ['a{5,2}', 'out of order'],
    ['a{1000}', 'more than'],
    ['(a{50}){50}', 'repeats too much'],
    ['a'.repeat(300), 'longer than'],
    ['a\\', 'lone backslash'],
  ])('refuses %j', (pattern, reason) => {
    expect(() => compilePattern(pattern)).toThrow(PatternError);
    expect(() => compilePattern(pattern)).toThrow(reason);
  });
});
