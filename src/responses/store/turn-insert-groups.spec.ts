import { jest } from '@jest/globals';
import type { TurnRecord } from '../../turns/turn.types.js';
import { TurnInsertGroups, type TurnGroupWriter } from './turn-insert-groups.js';

/** A statement the fake database got: `one` (a single turn's) or `group`, with its response ids. */
interface Statement {
  kind: 'one' | 'group' | 'read';
  ids: string[];
}

/**
 * A fake writer: each statement resolves when the test says so (`answer`); a group is refused
 * when one of its turns is in `refused`, a single statement when the turn is in `failing`; the
 * turns in `notStored` are answered false (their conversation another organization's).
 */
function fakeWriter() {
  const statements: Statement[] = [];
  const waiting: (() => void)[] = [];
  const refused = new Set<string>();
  const failing = new Set<string>();
  const notStored = new Set<string>();
  /** Turns whose group loses its connection: the outcome unknown (the group committed or not). */
  const lost = new Set<string>();
  const rows: string[][] = [];
  const pendingStatement = <T>(statement: Statement, outcome: () => T) => {
    statements.push(statement);
    return new Promise<void>((resolve) => waiting.push(resolve)).then(outcome);
  };
  const writer: TurnGroupWriter = {
    writeGroup: (turns, groupRows) => {
      const ids = turns.map((turn) => turn.responseId);
      rows.push(groupRows);
      return pendingStatement({ kind: 'group', ids }, () => {
        if (ids.some((id) => refused.has(id))) throw new Error('refused');
        if (ids.some((id) => lost.has(id))) throw Object.assign(new Error('lost'), { code: 'ECONNRESET' });
        return new Set(ids.filter((id) => !notStored.has(id)));
      });
    },
    writeOne: (turn) =>
      pendingStatement({ kind: 'one', ids: [turn.responseId] }, () => {
        if (failing.has(turn.responseId)) throw new Error(`failed ${turn.responseId}`);
        return !notStored.has(turn.responseId);
      }),
    written: (turn) =>
      pendingStatement({ kind: 'read', ids: [turn.responseId] }, () => !notStored.has(turn.responseId)),
  };
  /** Answers every statement sent so far, and lets the writer send the next. */
  const answer = async () => {
    await settle();
    for (const done of waiting.splice(0)) done();
    await settle();
  };
  return { writer, statements, refused, failing, notStored, lost, rows, answer };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

function turn(responseId: string, conversationId = `c-${responseId}`): TurnRecord {
  return {
    responseId,
    conversationId,
    organizationId: 'org',
    assistantId: 'asst',
    userId: 'ann',
    newConversation: true,
    newConversationTitle: 'title',
    previousResponseId: null,
    status: 'completed',
    depth: 1,
    activeAgent: null,
    instructions: 'be brief',
    input: [],
    output: [],
    outputText: 'hi',
    transcript: [],
    usage: null,
    error: null,
    messages: [],
    createdAt: new Date(0),
    completedAt: new Date(1),
    apiKeyId: null,
    usageRows: [],
    body: '{"id":"x"}',
  } as unknown as TurnRecord;
}

/** Collects each turn's outcome, in the order they resolve. */
function track(groups: TurnInsertGroups, ids: string[]) {
  const outcomes: string[] = [];
  const promises = ids.map((id, i) =>
    groups.insert(turn(id, `c-${i}`)).then(
      (stored) => outcomes.push(`${id}:${stored}`),
      (error: Error) => outcomes.push(`${id}:${error.message}`),
    ),
  );
  return { outcomes, all: Promise.all(promises) };
}

describe('TurnInsertGroups', () => {
  it('sends a lone turn at once in its single statement', async () => {
    const db = fakeWriter();
    const groups = new TurnInsertGroups(db.writer);
    const stored = groups.insert(turn('a'));
    expect(db.statements).toEqual([{ kind: 'one', ids: ['a'] }]);
    await db.answer();
    await expect(stored).resolves.toBe(true);
  });

  it('groups the turns that arrive while a statement is in flight, in one statement', async () => {
    const db = fakeWriter();
    const groups = new TurnInsertGroups(db.writer);
    const { outcomes, all } = track(groups, ['a', 'b', 'c', 'd']);
    expect(db.statements).toEqual([{ kind: 'one', ids: ['a'] }]);
    await db.answer();
    expect(db.statements[1]).toEqual({ kind: 'group', ids: ['b', 'c', 'd'] });
    // Each turn's row, as the statement's JSON array holds it.
    expect(db.rows[0].map((row) => (JSON.parse(row) as { response_id: string }).response_id)).toEqual([
      'b',
      'c',
      'd',
    ]);
    db.notStored.add('c');
    await db.answer();
    await all;
    expect(outcomes).toEqual(['a:true', 'b:true', 'c:false', 'd:true']);
  });

  it('puts one turn per conversation in a group, the others in the next', async () => {
    const db = fakeWriter();
    const groups = new TurnInsertGroups(db.writer);
    const first = groups.insert(turn('a', 'c1'));
    const rest = [
      groups.insert(turn('b', 'c2')),
      groups.insert(turn('c', 'c2')),
      groups.insert(turn('d', 'c1')),
    ];
    await db.answer();
    await db.answer();
    await db.answer();
    expect(db.statements).toEqual([
      { kind: 'one', ids: ['a'] },
      { kind: 'group', ids: ['d', 'b'] },
      { kind: 'one', ids: ['c'] },
    ]);
    await expect(Promise.all([first, ...rest])).resolves.toEqual([true, true, true, true]);
  });

  it('retries a refused group turn by turn: one turn’s error fails that turn alone', async () => {
    const db = fakeWriter();
    const groups = new TurnInsertGroups(db.writer);
    const { outcomes, all } = track(groups, ['a', 'b', 'c', 'd']);
    db.refused.add('c');
    db.failing.add('c');
    db.notStored.add('d');
    for (let i = 0; i < 6; i++) await db.answer();
    await all;
    expect(db.statements).toEqual([
      { kind: 'one', ids: ['a'] },
      { kind: 'group', ids: ['b', 'c', 'd'] },
      { kind: 'one', ids: ['b'] },
      { kind: 'one', ids: ['c'] },
      { kind: 'one', ids: ['d'] },
    ]);
    // Resolved in the order of their retries.
    expect(outcomes).toEqual(['a:true', 'b:true', 'c:failed c', 'd:false']);
  });

  it('sends what arrives during a retry in the next group', async () => {
    const db = fakeWriter();
    const groups = new TurnInsertGroups(db.writer);
    const { all } = track(groups, ['a', 'b', 'c']);
    db.refused.add('b');
    await db.answer();
    await db.answer();
    const later = [groups.insert(turn('x')), groups.insert(turn('y'))];
    for (let i = 0; i < 3; i++) await db.answer();
    await all;
    await expect(Promise.all(later)).resolves.toEqual([true, true]);
    expect(db.statements.slice(-1)).toEqual([{ kind: 'group', ids: ['x', 'y'] }]);
  });

  it('reads, never writes again, the turns of a group whose outcome is unknown', async () => {
    const db = fakeWriter();
    const groups = new TurnInsertGroups(db.writer);
    const { outcomes, all } = track(groups, ['a', 'b', 'c']);
    db.lost.add('b');
    db.notStored.add('c');
    for (let i = 0; i < 3; i++) await db.answer();
    await all;
    expect(db.statements).toEqual([
      { kind: 'one', ids: ['a'] },
      { kind: 'group', ids: ['b', 'c'] },
      { kind: 'read', ids: ['b'] },
      { kind: 'read', ids: ['c'] },
    ]);
    expect(outcomes).toEqual(['a:true', 'b:true', 'c:lost']);
  });

  it('lets a statement stuck for a second no longer hold back the next ones', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    try {
      const db = fakeWriter();
      const groups = new TurnInsertGroups(db.writer);
      const stuck = groups.insert(turn('a'));
      const { all } = track(groups, ['b', 'c']);
      await settle();
      expect(db.statements).toEqual([{ kind: 'one', ids: ['a'] }]);
      jest.advanceTimersByTime(1000);
      await settle();
      expect(db.statements).toEqual([
        { kind: 'one', ids: ['a'] },
        { kind: 'group', ids: ['b', 'c'] },
      ]);
      await db.answer();
      await all;
      await expect(stuck).resolves.toBe(true);
    } finally {
      jest.useRealTimers();
    }
  });
});
