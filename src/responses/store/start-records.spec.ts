import { EventEmitter } from 'node:events';
import type { DataSource } from 'typeorm';
import type { TurnStart } from '../../turns/turn.types.js';
import { startsStatement } from './start-records-sql.js';
import { StartRecords } from './start-records.js';

/** A statement the fake database got: the response ids of its rows. */
type Statement = string[];

/**
 * A pool of fake connections: each statement resolves when the test says so (`answer`), and is
 * refused when one of its rows is a response id in `refused`.
 */
function fakePool(max: number) {
  const statements: Statement[] = [];
  const waiting: (() => void)[] = [];
  const refused = new Set<string>();
  /** Response ids whose row the statement does not write (their conversation is gone). */
  const unwritten = new Set<string>();
  const released: { destroyed: boolean }[] = [];
  const clients: EventEmitter[] = [];
  let connects = 0;
  const pool = {
    options: { max },
    connect: () => {
      connects++;
      const client = Object.assign(new EventEmitter(), {
        query: ({ values }: { values: unknown[] }) => {
          const ids = (JSON.parse(values[0] as string) as { response_id: string }[]).map(
            (row) => row.response_id,
          );
          statements.push(ids);
          return new Promise((resolve, reject) => {
            waiting.push(() =>
              ids.some((id) => refused.has(id))
                ? reject(new Error('refused'))
                : resolve({ rows: ids.filter((id) => !unwritten.has(id)).map((id) => ({ id })) }),
            );
          });
        },
        release: (error?: Error) => released.push({ destroyed: error !== undefined }),
      });
      clients.push(client);
      return Promise.resolve(client);
    },
  };
  const dataSource = { driver: { master: pool } } as unknown as DataSource;
  /** Answers every statement sent so far, and lets the writers send the next ones. */
  const answer = async () => {
    await settle();
    for (const done of waiting.splice(0)) done();
    await settle();
  };
  return { dataSource, statements, refused, unwritten, released, clients, answer, connects: () => connects };
}

function start(responseId: string, conversationId = `c-${responseId}`): TurnStart {
  return {
    responseId,
    conversationId,
    organizationId: 'org',
    assistantId: 'asst',
    newConversationTitle: null,
    previousResponseId: null,
    userId: null,
    status: 'in_progress',
    depth: 1,
    activeAgent: null,
    instructions: null,
    input: [],
    createdAt: new Date(0),
    messages: [],
    transcript: [],
    background: false,
    newConversation: false,
    body: '{"id":"r"}',
    ownerId: 'me',
    leaseMs: 1000,
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

/** Two starts, one after the other: each goes out at once, on a kept connection of its own. */
async function busyBoth(records: StartRecords): Promise<Promise<void>[]> {
  const first = records.record(start('a'));
  await settle();
  const second = records.record(start('b'));
  await settle();
  return [first, second];
}

/** Settles every promise: how each start ended. */
function outcomes(records: Promise<void>[]) {
  return Promise.all(
    records.map((record) =>
      record.then(
        () => 'stored',
        () => 'failed',
      ),
    ),
  );
}

describe('StartRecords', () => {
  it('sends a start at once on a free kept connection, and the starts that arrive meanwhile in one statement', async () => {
    const db = fakePool(20);
    const records = new StartRecords(db.dataSource);
    const first = await busyBoth(records);
    expect(db.statements).toEqual([['a'], ['b']]);
    const later = ['c', 'd', 'e'].map((id) => records.record(start(id)));
    const ended = outcomes([...first, ...later]);
    await db.answer();
    expect(db.statements.slice(2)).toEqual([['c', 'd', 'e']]);
    await db.answer();
    expect(await ended).toEqual(Array(5).fill('stored'));
    // Two connections, kept: none went back to the pool.
    expect(db.connects()).toBe(2);
    expect(db.released).toEqual([]);
    records.onModuleDestroy();
    expect(db.released).toEqual([{ destroyed: false }, { destroyed: false }]);
  });

  it('puts two starts of one conversation in different statements', async () => {
    const db = fakePool(20);
    const records = new StartRecords(db.dataSource);
    const busy = await busyBoth(records);
    const same = [records.record(start('c', 'shared')), records.record(start('d', 'shared'))];
    const ended = outcomes([...busy, ...same]);
    for (let round = 0; round < 3; round++) await db.answer();
    expect(db.statements.slice(2)).toEqual([['c'], ['d']]);
    expect(await ended).toEqual(Array(4).fill('stored'));
  });

  it('fails a start whose row the statement did not write (its conversation gone), the others stored', async () => {
    const db = fakePool(20);
    const records = new StartRecords(db.dataSource);
    db.unwritten.add('gone');
    const ended = outcomes([records.record(start('ok')), records.record(start('gone'))]);
    await db.answer();
    await db.answer();
    expect(await ended).toEqual(['stored', 'failed']);
    records.onModuleDestroy();
  });

  it('answers a gone start with the not-found error of what its request continued', async () => {
    const db = fakePool(20);
    const records = new StartRecords(db.dataSource);
    db.unwritten.add('by-conversation');
    db.unwritten.add('by-response');
    const byConversation = records.record({
      ...start('by-conversation'),
      continued: { kind: 'conversation', id: 'conv_1' },
    });
    const byResponse = records.record({
      ...start('by-response'),
      continued: { kind: 'response', id: 'resp_2' },
    });
    const errors = Promise.all(
      [byConversation, byResponse].map((record) => record.catch((error: unknown) => error)),
    );
    await db.answer();
    await db.answer();
    expect(await errors).toMatchObject([
      { code: 'conversation_not_found', message: 'No conversation conv_1' },
      { code: 'response_not_found', message: 'No response resp_2' },
    ]);
    records.onModuleDestroy();
  });

  it('retries a refused statement start by start: only the refused start fails', async () => {
    const db = fakePool(20);
    const records = new StartRecords(db.dataSource);
    const busy = await busyBoth(records);
    db.refused.add('bad');
    const grouped = ['c', 'bad', 'e'].map((id) => records.record(start(id)));
    const ended = outcomes([...busy, ...grouped]);
    for (let round = 0; round < 6; round++) await db.answer();
    // A batch goes in its conversations' order (c-bad, c-c, c-e), so two batches lock alike.
    expect(db.statements.slice(2)).toEqual([['bad', 'c', 'e'], ['bad'], ['c'], ['e']]);
    expect(await ended).toEqual(['stored', 'stored', 'stored', 'failed', 'stored']);
    // A connection whose statement failed is destroyed, not kept.
    expect(db.released.filter((release) => release.destroyed).length).toBeGreaterThanOrEqual(1);
  });

  it('after a lost reply, a start whose row this replica owns is stored; a start without one fails', async () => {
    const db = fakePool(20);
    // The grouped statement committed, but its reply was lost: every retry then fails on the key.
    const committed = new Set(['c']);
    const query = (_sql: string, [id, organization, owner]: string[]) =>
      Promise.resolve(committed.has(id) && organization === 'org' && owner === 'me' ? [{}] : []);
    const records = new StartRecords(Object.assign(db.dataSource, { query }));
    const busy = await busyBoth(records);
    db.refused.add('c').add('d');
    const grouped = ['c', 'd'].map((id) => records.record(start(id)));
    const ended = outcomes([...busy, ...grouped]);
    for (let round = 0; round < 5; round++) await db.answer();
    expect(db.statements.slice(2)).toEqual([['c', 'd'], ['c'], ['d']]);
    expect(await ended).toEqual(['stored', 'stored', 'stored', 'failed']);
  });

  it('gives back at once a kept connection the server closed; the next start goes on the other', async () => {
    const db = fakePool(20);
    const records = new StartRecords(db.dataSource);
    const first = await busyBoth(records);
    await db.answer();
    await Promise.all(first);
    db.clients[0].emit('end');
    expect(db.released).toEqual([{ destroyed: true }]);
    const next = records.record(start('c'));
    await db.answer();
    await next;
    expect(db.statements.at(-1)).toEqual(['c']);
    // The other kept connection was free: no new one was needed.
    expect(db.connects()).toBe(2);
  });

  it('keeps no connection with a small pool: each statement gives its connection back', async () => {
    const db = fakePool(4);
    const records = new StartRecords(db.dataSource);
    const one = records.record(start('a'));
    await db.answer();
    await one;
    expect(db.released).toEqual([{ destroyed: false }]);
  });
});

describe('startsStatement', () => {
  const starting = (id: string) => ({ ...start(id), newConversation: true });

  it('takes the statement without an update when every start starts its conversation', () => {
    for (const batch of [[starting('a')], [starting('a'), starting('b')]]) {
      expect(startsStatement(batch)).toEqual({
        statement: expect.objectContaining({ name: 'turn_starts_new' }),
        more: [true],
      });
    }
  });

  it('names the conversation and its organization as parameters for one continuing start', () => {
    expect(startsStatement([start('a', 'conv-1')])).toEqual({
      statement: expect.objectContaining({ name: 'turn_start_continued' }),
      more: [true, 'conv-1', 'org'],
    });
  });

  it('takes the batch statement for several continuing starts, or new and continuing together', () => {
    for (const batch of [
      [start('a'), start('b')],
      [starting('a'), start('b')],
      [start('a'), starting('b')],
    ]) {
      expect(startsStatement(batch)).toEqual({
        statement: expect.objectContaining({ name: 'turn_starts' }),
        more: [true],
      });
    }
  });

  it("keeps a batch synchronous when one of its starts is a background turn's", () => {
    const background = (turn: TurnStart) => ({ ...turn, background: true });
    expect(startsStatement([background(start('a', 'conv-1'))]).more).toEqual([false, 'conv-1', 'org']);
    expect(startsStatement([starting('a'), background(starting('b'))]).more).toEqual([false]);
    expect(startsStatement([start('a'), background(start('b'))]).more).toEqual([false]);
  });

  it('refuses an empty batch', () => {
    expect(() => startsStatement([])).toThrow();
  });
});
