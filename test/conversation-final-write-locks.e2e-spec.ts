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

    it('a deletion waiting on a turn that holds the conversation takes that turn’s rows with it', async () => {
      // What every writer of responses and messages does (docs/architecture.md, "Rows of a
      // deleted conversation"): it locks the conversation row in its own statement or transaction,
      // then writes from it. A deletion that comes meanwhile waits, and its triggers, run after the
      // wait, see the rows committed meanwhile: none stays without its conversation.
      const id = await held.conversation(ann);
      const [first] = await held.app.dataSource.query<{ id: string }[]>(
        'SELECT id FROM responses WHERE conversation_id = $1',
        [id],
      );
      // `other` watches for the waiting lock; these two are the turn and the deletion.
      const writer = new pg.Client({ connectionString: held.app.database.url });
      const deleter = new pg.Client({ connectionString: held.app.database.url });
      await writer.connect();
      await deleter.connect();
      try {
        await writer.query('BEGIN');
        await writer.query('UPDATE conversations SET updated_at = now() WHERE id = $1', [id]);
        // Another turn's rows, copied from the first turn's with new ids.
        const [{ copy }] = (
          await writer.query<{ copy: string }>(
            `INSERT INTO responses
             SELECT (jsonb_populate_record(r, jsonb_build_object('id', gen_random_uuid()))).* FROM responses r
             WHERE r.id = $1 RETURNING id AS copy`,
            [first.id],
          )
        ).rows;
        await writer.query(
          `INSERT INTO messages
           SELECT (jsonb_populate_record(m, jsonb_build_object('id', gen_random_uuid(), 'response_id', $2::uuid))).*
           FROM messages m WHERE m.response_id = $1`,
          [first.id, copy],
        );
        const deletion = deleter.query('DELETE FROM conversations WHERE id = $1', [id]);
        await lockWaiters(1);
        await writer.query('COMMIT');
        await deletion;

        const left = await held.app.dataSource.query<{ responses: number; messages: number }[]>(
          `SELECT (SELECT count(*)::int FROM responses WHERE conversation_id = $1) AS responses,
                  (SELECT count(*)::int FROM messages WHERE conversation_id = $1) AS messages`,
          [id],
        );
        expect(left).toEqual([{ responses: 0, messages: 0 }]);
      } finally {
        await writer.end();
        await deleter.end();
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
