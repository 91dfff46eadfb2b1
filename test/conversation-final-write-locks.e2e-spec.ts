import pg from 'pg';
import { HeldTurns, waitUntil } from './support/held-turns.js';

/**
 * A turn's final write that waits on its conversation's row lock while another transaction
 * changes the conversation (docs/architecture.md, "A conversation's head" and "A conversation
 * deleted mid-turn"): what that transaction committed decides, not the final write's snapshot,
 * taken before. PostgreSQL only: the embedded database runs one statement at a time.
 */
(process.env.DATABASE_URL ? describe : describe.skip)(
  'a final write waiting on its conversation (needs DATABASE_URL)',
  () => {
    const held = new HeldTurns();
    const ann = 'ann';
    let other: pg.Client;

    beforeAll(async () => {
      await held.start('final-write-locks');
      other = new pg.Client({ connectionString: held.app.database.url });
      await other.connect();
    });
    afterAll(async () => {
      await other?.end();
      await held.close();
    });

    /** Waits until `count` statements of the database wait for a lock (`other` may be in a transaction). */
    async function lockWaiters(count: number): Promise<void> {
      await waitUntil(async () => {
        await other.query('SELECT pg_stat_clear_snapshot()');
        const { rows } = await other.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        return rows[0].n >= count;
      }, `${count} statements waiting for a lock`);
    }

    it('a deletion committed while the final write waits: the client gets its answer, the usage is counted', async () => {
      const conversation = await held.conversation(ann);
      const turn = await held.heldTurn(ann, conversation);
      // DELETE /v1/conversations/{id} in flight: its cascade done, not yet committed.
      await other.query('BEGIN');
      await other.query('DELETE FROM conversations WHERE id = $1', [conversation]);
      turn.release();
      await lockWaiters(1);
      await other.query('COMMIT');

      const answered = await turn.reply;
      expect(answered.status).toBe(200);
      expect(answered.body).toMatchObject({ status: 'completed', output_text: 'answer A' });
      const pending = await held.app.dataSource.query<{ user_id: string }[]>(
        'SELECT user_id FROM usage_pending WHERE response_id = $1',
        [(answered.body.id as string).slice('resp_'.length)],
      );
      expect(pending).toEqual([{ user_id: '' }]);
      expect((await held.call(ann, 'GET', `/v1/conversations/${conversation}`)).status).toBe(404);
    });

    it('a newer turn whose start commits while the older one’s final write waits stays the head', async () => {
      const conversation = await held.conversation(ann);
      const a = await held.heldTurn(ann, conversation);
      await other.query('BEGIN');
      await other.query('SELECT 1 FROM conversations WHERE id = $1 FOR UPDATE', [conversation]);
      // B, newer than A, starts: its start record waits for the conversation's row first…
      const b = held.heldReply('answer B');
      const bOpened = held.stream(ann, { input: 'question B', conversation });
      await lockWaiters(1);
      // …then A's final write, whose snapshot cannot see B's row, committed after it was taken.
      a.release();
      await lockWaiters(2);
      await other.query('COMMIT');
      const { id: bId, stream } = await bOpened;
      try {
        expect((await a.reply).status).toBe(200);
        const [row] = await held.app.dataSource.query<{ last_response_id: string }[]>(
          'SELECT last_response_id FROM conversations WHERE id = $1',
          [conversation],
        );
        expect(`resp_${row.last_response_id}`).toBe(bId);
      } finally {
        // B's own final write would make it the head in any case: it ends after the check.
        b.release();
        await stream.rest();
      }
    });

    it('a conversation deleted before a continuing turn’s start commits: 404, and it stays deleted', async () => {
      const conversation = await held.conversation(ann);
      await other.query('BEGIN');
      await other.query('SELECT 1 FROM conversations WHERE id = $1 FOR UPDATE', [conversation]);
      held.upstream.script({ text: 'answer B' });
      const reply = held.call(ann, 'POST', '/v1/responses', {
        model: held.model,
        input: 'question B',
        conversation,
        background: true,
      });
      await lockWaiters(1);
      await other.query('DELETE FROM conversations WHERE id = $1', [conversation]);
      await other.query('COMMIT');

      const answered = await reply;
      expect(answered.status).toBe(404);
      expect(answered.body.error).toMatchObject({ code: 'conversation_not_found' });
      const { rows } = await other.query('SELECT 1 FROM conversations WHERE id = $1', [conversation]);
      expect(rows).toEqual([]);
    });
  },
);
