/** The parser of the offline model's script patterns (see offline-pattern.ts for the subset). */

import {
  caseless,
  isDigit,
  isLineEnd,
  isSpace,
  isWord,
  literal,
  not,
  type CharTest,
} from './offline-char-tests.js';

const MAX_REPEAT = 100;

export class PatternError extends Error {}

export type AssertKind = 'start' | 'end' | 'boundary' | 'not-boundary';

export type Node =
  | { type: 'char'; test: CharTest }
  | { type: 'assert'; kind: AssertKind }
  | { type: 'cat'; items: Node[] }
  | { type: 'alt'; options: Node[] }
  | { type: 'repeat'; node: Node; min: number; max: number };

/** One character of a class: a single code, or a set such as `\d`. */
type ClassItem = { code: number } | { test: CharTest };

export class Parser {
  private pos = 0;

  constructor(private readonly source: string) {}

  parse(): Node {
    const node = this.alternation();
    if (this.pos < this.source.length) throw new PatternError(`has an unmatched ")" at ${this.pos + 1}`);
    return node;
  }

  private peek(): string | undefined {
    return this.source[this.pos];
  }

  private alternation(): Node {
    const options = [this.sequence()];
    while (this.peek() === '|') {
      this.pos++;
      options.push(this.sequence());
    }
    return options.length === 1 ? options[0] : { type: 'alt', options };
  }

  private sequence(): Node {
    const items: Node[] = [];
    while (this.pos < this.source.length && this.peek() !== '|' && this.peek() !== ')') {
      items.push(this.repeated());
    }
    return { type: 'cat', items };
  }

  private repeated(): Node {
    const atom = this.atom();
    const bounds = this.quantifier();
    if (!bounds) return atom;
    if (atom.type === 'assert') throw new PatternError(`repeats an anchor at ${this.pos}`);
    if (this.peek() === '?') this.pos++;
    if (this.quantifierAhead()) throw new PatternError(`has two quantifiers in a row at ${this.pos + 1}`);
    return { type: 'repeat', node: atom, min: bounds.min, max: bounds.max };
  }

  private quantifierAhead(): boolean {
    const char = this.peek();
    return char === '*' || char === '+' || char === '?' || this.braces() !== null;
  }

  private quantifier(): { min: number; max: number } | null {
    const char = this.peek();
    if (char === '*' || char === '+' || char === '?') {
      this.pos++;
      return { min: char === '+' ? 1 : 0, max: char === '?' ? 1 : Infinity };
    }
    const braces = this.braces();
    if (!braces) return null;
    this.pos += braces.length;
    return braces;
  }

  /** `{n}`, `{n,}` or `{n,m}` at the cursor, else null (a lone `{` is a literal). */
  private braces(): { min: number; max: number; length: number } | null {
    return this.bracesAt(this.pos);
  }

  private bracesAt(at: number): { min: number; max: number; length: number } | null {
    const match = /^\{(\d+)(,(\d*))?\}/.exec(this.source.slice(at, at + 12));
    if (!match) return null;
    const min = Number(match[1]);
    const max = match[2] === undefined ? min : match[3] === '' ? Infinity : Number(match[3]);
    if (min > MAX_REPEAT || (max !== Infinity && max > MAX_REPEAT)) {
      throw new PatternError(`repeats more than ${MAX_REPEAT} times`);
    }
    if (max < min) throw new PatternError(`has a quantifier {${min},${max}} out of order`);
    return { min, max, length: match[0].length };
  }

  private atom(): Node {
    const char = this.source[this.pos++];
    switch (char) {
      case '(':
        return this.group();
      case '[':
        return { type: 'char', test: this.charClass() };
      case '.':
        return { type: 'char', test: not(isLineEnd) };
      case '^':
        return { type: 'assert', kind: 'start' };
      case '$':
        return { type: 'assert', kind: 'end' };
      case '\\':
        return this.escape();
      case '*':
      case '+':
      case '?':
        throw new PatternError(`has nothing to repeat at ${this.pos}`);
      default:
        if (char === '{' && this.bracesAt(this.pos - 1)) {
          throw new PatternError(`has nothing to repeat at ${this.pos}`);
        }
        return { type: 'char', test: literal(char.charCodeAt(0)) };
    }
  }

  private group(): Node {
    if (this.peek() === '?') {
      if (this.source[this.pos + 1] !== ':') {
        throw new PatternError('uses a lookaround or named group, which the offline model does not support');
      }
      this.pos += 2;
    }
    const inner = this.alternation();
    if (this.peek() !== ')') throw new PatternError('has an unterminated group');
    this.pos++;
    return inner;
  }

  private escape(): Node {
    const char = this.source[this.pos++];
    if (char === 'b') return { type: 'assert', kind: 'boundary' };
    if (char === 'B') return { type: 'assert', kind: 'not-boundary' };
    const item = this.escapedCharacter(char);
    return { type: 'char', test: 'code' in item ? literal(item.code) : item.test };
  }

  /** What `\<char>` stands for, inside or outside a class. */
  private escapedCharacter(char: string | undefined): ClassItem {
    if (char === undefined) throw new PatternError('ends with a lone backslash');
    const sets: Record<string, CharTest> = {
      d: isDigit,
      D: not(isDigit),
      w: isWord,
      W: not(isWord),
      s: isSpace,
      S: not(isSpace),
    };
    if (sets[char]) return { test: sets[char] };
    const controls: Record<string, number> = { t: 9, n: 10, v: 11, f: 12, r: 13, '0': 0 };
    if (controls[char] !== undefined) return { code: controls[char] };
    if (/[A-Za-z0-9]/.test(char)) {
      throw new PatternError(
        `uses \\${char}, which the offline model does not support (no backreferences or code escapes)`,
      );
    }
    return { code: char.charCodeAt(0) };
  }

  private charClass(): CharTest {
    const negated = this.peek() === '^';
    if (negated) this.pos++;
    const items: ClassItem[] = [];
    const ranges: [number, number][] = [];
    while (this.peek() !== ']') {
      if (this.pos >= this.source.length) throw new PatternError('has an unterminated character class');
      const start = this.classItem();
      const isRange =
        'code' in start &&
        this.peek() === '-' &&
        this.source[this.pos + 1] !== ']' &&
        this.pos + 1 < this.source.length;
      if (!isRange) {
        items.push(start);
        continue;
      }
      this.pos++;
      const end = this.classItem();
      if (!('code' in end)) {
        items.push(start, { code: 45 }, end);
      } else if (end.code < start.code) {
        throw new PatternError('has a character range out of order');
      } else {
        ranges.push([start.code, end.code]);
      }
    }
    this.pos++;
    const inClass = caseless(
      (code) =>
        ranges.some(([low, high]) => code >= low && code <= high) ||
        items.some((item) => ('code' in item ? item.code === code : item.test(code))),
    );
    return negated ? not(inClass) : inClass;
  }

  private classItem(): ClassItem {
    const char = this.source[this.pos++];
    if (char !== '\\') return { code: char.charCodeAt(0) };
    const escaped = this.source[this.pos++];
    // Inside a class `\b` is a backspace, as in JavaScript.
    return escaped === 'b' ? { code: 8 } : this.escapedCharacter(escaped);
  }
}
