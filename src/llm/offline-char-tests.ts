// The character tests of the offline model's script patterns: what one character of a pattern
// (a literal, a class, `\d`, `.`) accepts, case-insensitively as the patterns match.

export type CharTest = (code: number) => boolean;

export function isWordAt(text: string, pos: number): boolean {
  return pos >= 0 && pos < text.length && isWord(text.charCodeAt(pos));
}

export function isWord(code: number): boolean {
  return (
    (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95
  );
}

export const isDigit: CharTest = (code) => code >= 48 && code <= 57;
const SPACES = new Set([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff,
]);
export const isSpace: CharTest = (code) => SPACES.has(code) || (code >= 0x2000 && code <= 0x200a);
export const isLineEnd: CharTest = (code) =>
  code === 0x0a || code === 0x0d || code === 0x2028 || code === 0x2029;
export const not =
  (test: CharTest): CharTest =>
  (code) =>
    !test(code);

/** The test, case-insensitively: the character, or its lower or upper case, passes. */
export function caseless(test: CharTest): CharTest {
  return (code) => {
    if (test(code)) return true;
    const char = String.fromCharCode(code);
    const lower = char.toLowerCase();
    const upper = char.toUpperCase();
    return (
      (lower.length === 1 && lower !== char && test(lower.charCodeAt(0))) ||
      (upper.length === 1 && upper !== char && test(upper.charCodeAt(0)))
    );
  };
}

/** One character, in either case (patterns match case-insensitively). */
export function literal(code: number): CharTest {
  const char = String.fromCharCode(code);
  const lower = char.toLowerCase();
  const upper = char.toUpperCase();
  const codes = new Set([code]);
  if (lower.length === 1) codes.add(lower.charCodeAt(0));
  if (upper.length === 1) codes.add(upper.charCodeAt(0));
  return (candidate) => codes.has(candidate);
}
