import { isWordAt, type CharTest } from './offline-char-tests.js';
import { Parser, PatternError, type AssertKind, type Node } from './offline-pattern-parser.js';

/**
 * The offline model's script patterns, matched in linear time. A tenant writes them (an
 * organization admin configures its assistants), so they never reach the JavaScript regex
 * engine, whose backtracking `^(a+)+$` turns into minutes on the event loop. This is a small
 * Thompson NFA run as a Pike VM: the cost is at most (program size × tested characters), with
 * both bounded below.
 *
 * The subset, always case-insensitive: literal characters, `.`, classes `[a-z0-9_]` / `[^…]`,
 * the escapes `\d \D \w \W \s \S \b \B \t \n \r \f \v \0` and escaped punctuation (`\.`), anchors
 * `^ $`, groups `(…)` and `(?:…)`, alternation `|`, and the quantifiers `* + ? {n} {n,} {n,m}`
 * (a lazy `?` after one changes nothing: a rule only asks whether the pattern matches).
 * Backreferences, lookarounds, named groups and other escapes are refused.
 */

/** Longest pattern accepted, in characters. */
export const MAX_PATTERN_LENGTH = 256;
/** Largest compiled program of one pattern (`{n,m}` copies its operand). */
export const MAX_PATTERN_PROGRAM = 256;
/**
 * Compiled steps of all the patterns of one script together: a turn tests every rule, so this
 * bounds a turn's matching work (steps × MAX_TESTED_CHARACTERS, about 20 ms at worst on a 2-core machine).
 */
export const MAX_SCRIPT_PROGRAM = 256;
/** Only this many characters of the input are tested; `$` then matches only if that was all of it. */
export const MAX_TESTED_CHARACTERS = 1024;

export { PatternError } from './offline-pattern-parser.js';

type Instruction =
  | { op: 'char'; test: CharTest }
  | { op: 'split'; a: number; b: number }
  | { op: 'jmp'; to: number }
  | { op: 'assert'; kind: AssertKind }
  | { op: 'match' };

/** A compiled pattern: run it with `patternMatches`. */
export interface OfflinePattern {
  readonly program: readonly Instruction[];
}

/** Compiles a pattern of the subset above; PatternError says what is refused. */
export function compilePattern(source: string): OfflinePattern {
  if (source.length > MAX_PATTERN_LENGTH) {
    throw new PatternError(`is longer than ${MAX_PATTERN_LENGTH} characters`);
  }
  const parser = new Parser(source);
  const tree = parser.parse();
  if (programSize(tree) + 1 > MAX_PATTERN_PROGRAM) {
    throw new PatternError(`repeats too much (a compiled program above ${MAX_PATTERN_PROGRAM} steps)`);
  }
  const program: Instruction[] = [];
  emit(tree, program);
  program.push({ op: 'match' });
  return { program };
}

/** Whether the pattern matches anywhere in the first MAX_TESTED_CHARACTERS of `text`. */
export function patternMatches(pattern: OfflinePattern, text: string): boolean {
  const program = pattern.program;
  const tested = Math.min(text.length, MAX_TESTED_CHARACTERS);
  // The position a state was last added at: each state is in a list at most once per position.
  const added = new Int32Array(program.length).fill(-1);
  const holds = (kind: AssertKind, pos: number): boolean => {
    if (kind === 'start') return pos === 0;
    if (kind === 'end') return pos === text.length;
    const boundary = isWordAt(text, pos - 1) !== isWordAt(text, pos);
    return kind === 'boundary' ? boundary : !boundary;
  };
  /** Adds the state and those it reaches without reading; true when one of them is the match. */
  const add = (list: number[], start: number, pos: number): boolean => {
    const stack = [start];
    while (stack.length > 0) {
      const pc = stack.pop()!;
      if (added[pc] === pos) continue;
      added[pc] = pos;
      const instruction = program[pc];
      if (instruction.op === 'match') return true;
      if (instruction.op === 'jmp') stack.push(instruction.to);
      else if (instruction.op === 'split') stack.push(instruction.b, instruction.a);
      else if (instruction.op === 'assert') {
        if (holds(instruction.kind, pos)) stack.push(pc + 1);
      } else list.push(pc);
    }
    return false;
  };
  let current: number[] = [];
  for (let pos = 0; ; pos++) {
    // A new attempt starts at every position: the search is unanchored unless the pattern says `^`.
    if (add(current, 0, pos)) return true;
    if (pos >= tested) return false;
    const code = text.charCodeAt(pos);
    const next: number[] = [];
    for (const pc of current) {
      const instruction = program[pc] as { op: 'char'; test: CharTest };
      if (instruction.test(code) && add(next, pc + 1, pos + 1)) return true;
    }
    current = next;
  }
}

/** The compiled size of a node, computed before anything is emitted. */
function programSize(node: Node): number {
  switch (node.type) {
    case 'char':
    case 'assert':
      return 1;
    case 'cat':
      return node.items.reduce((total, item) => total + programSize(item), 0);
    case 'alt':
      return node.options.reduce((total, option) => total + programSize(option) + 2, 0);
    case 'repeat': {
      const size = programSize(node.node);
      const optional = node.max === Infinity ? size + 2 : (node.max - node.min) * (size + 1);
      return node.min * size + optional;
    }
  }
}

function emit(node: Node, program: Instruction[]): void {
  switch (node.type) {
    case 'char':
      program.push({ op: 'char', test: node.test });
      return;
    case 'assert':
      program.push({ op: 'assert', kind: node.kind });
      return;
    case 'cat':
      node.items.forEach((item) => emit(item, program));
      return;
    case 'alt':
      return emitAlternation(node.options, program);
    case 'repeat':
      return emitRepeat(node, program);
  }
}

function emitAlternation(options: Node[], program: Instruction[]): void {
  const jumps: { op: 'jmp'; to: number }[] = [];
  options.forEach((option, index) => {
    if (index === options.length - 1) {
      emit(option, program);
      return;
    }
    const split: Instruction = { op: 'split', a: program.length + 1, b: -1 };
    program.push(split);
    emit(option, program);
    const jump = { op: 'jmp' as const, to: -1 };
    jumps.push(jump);
    program.push(jump);
    split.b = program.length;
  });
  for (const jump of jumps) jump.to = program.length;
}

function emitRepeat(node: { node: Node; min: number; max: number }, program: Instruction[]): void {
  for (let i = 0; i < node.min; i++) emit(node.node, program);
  if (node.max === Infinity) {
    const loop = program.length;
    const split: Instruction = { op: 'split', a: loop + 1, b: -1 };
    program.push(split);
    emit(node.node, program);
    program.push({ op: 'jmp', to: loop });
    split.b = program.length;
    return;
  }
  const splits: { op: 'split'; a: number; b: number }[] = [];
  for (let i = node.min; i < node.max; i++) {
    const split = { op: 'split' as const, a: program.length + 1, b: -1 };
    splits.push(split);
    program.push(split);
    emit(node.node, program);
  }
  for (const split of splits) split.b = program.length;
}
