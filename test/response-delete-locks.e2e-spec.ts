import pg from 'pg';
import { TurnStore } from '../src/responses/store/turn-store.repository.js';
import { HeldTurns, waitUntil } from './support/held-turns.js';
import { parseSse, type StreamInFlight } from './support/sse.js';

/**
 * `DELETE /v1/responses/{id}` of a conversation's last response, while a turn adds another
 * response to that conversation (docs/architecture.md, "A response deleted while a turn adds one"): the deletion
 * decides that the conversation is empty only under its row lock, which every writer of a
 * response takes first, so either the turn's response is seen and the conversation kept, or the
 * turn finds the conversation gone and stores nothing under it. Never a turn the client was told
 * about lost with a conversation deleted as empty. PostgreSQL only: the embedded database runs
 * one statement at a time.
 */
(process.env.DATABASE_URL ? describe : describe.skip)(
  'deleting a response while a turn adds one to its conversation (needs DATABASE_URL)',
  () => {
    const held = new HeldTurns();
    const ann = 'ann';
    let other: pg.Client;

    beforeAll(async () => {
      await held.start('delete-response-locks');
      other = new pg.Client({ connectionString: held.app.database.url });
      await other.connect();
    });
    afterAll(async () => {
      await other?.end();
      await held.close();
    });

    async function lockWaiters(count: number): Promise<boolean> {
      await other.query('SELECT pg_stat_clear_snapshot()');
      const { rows } = await other.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      return rows[0].n >= count;
    }

    /** The conversation's one response (held.conversation's first turn). */
    async function onlyResponse(conversation: string): Promise<string> {
      const rows = await held.app.dataSource.query<{ id: string }[]>(
        'SELECT id FROM responses WHERE conversation_id = $1',
        [conversation],
      );
      expect(rows).toHaveLength(1);
      return rows[0].id;
    }

    it('a response committed while the deletion waits keeps the conversation, and itself', async () => {
      const conversation = await held.conversation(ann);
      const first = await onlyResponse(conversation);
      // A writer as every turn's statement is: the conversation's row first, then a response of it.
      const writer = new pg.Client({ connectionString: held.app.database.url });
      await writer.connect();
      try {
        await writer.query('BEGIN');
        await writer.query('UPDATE conversations SET updated_at = now() WHERE id = $1', [conversation]);
        const [{ copy }] = (
          await writer.query<{ copy: string }>(
            `INSERT INTO responses
             SELECT (jsonb_populate_record(r, jsonb_build_object('id', gen_random_uuid()))).* FROM responses r
             WHERE r.id = $1 RETURNING id AS copy`,
            [first],
          )
        ).rows;
        const deletion = held.call(ann, 'DELETE', `/v1/responses/resp_${first}`);
        await waitUntil(() => lockWaiters(1), 'the deletion waiting');
        await writer.query('COMMIT');

        expect((await deletion).status).toBe(200);
        expect((await held.call(ann, 'GET', `/v1/responses/resp_${copy}`)).status).toBe(200);
        expect((await held.call(ann, 'GET', `/v1/conversations/${conversation}`)).status).toBe(200);
        expect((await held.call(ann, 'GET', `/v1/responses/resp_${first}`)).status).toBe(404);
      } finally {
        await writer.end();
      }
    });

    it('a turn that starts while the deletion runs finds the conversation gone: 404, nothing stored', async () => {
      const conversation = await held.conversation(ann);
      const first = await onlyResponse(conversation);
      // The deletion in flight, held on the response's row.
      await other.query('BEGIN');
      await other.query('SELECT 1 FROM responses WHERE id = $1 FOR UPDATE', [first]);
      const deletion = held.call(ann, 'DELETE', `/v1/responses/resp_${first}`);
      await waitUntil(() => lockWaiters(1), 'the deletion waiting');

      held.upstream.script({ text: 'answer B' });
      let answered = false;
      const reply = held
        .call(ann, 'POST', '/v1/responses', {
          model: held.model,
          input: 'question B',
          conversation,
          background: true,
        })
        .finally(() => (answered = true));
      // Either the start waits on the conversation the deletion holds, or it was answered.
      await waitUntil(async () => answered || (await lockWaiters(2)), 'the start waiting or answered');
      await other.query('COMMIT');

      expect((await deletion).status).toBe(200);
      const started = await reply;
      // Refused before its model call: its reply is not left for the next test's.
      held.upstream.clearScripts();
      expect(started.status).toBe(404);
      expect(started.body.error).toMatchObject({ code: 'conversation_not_found' });
      const left = await held.app.dataSource.query<{ responses: number; conversations: number }[]>(
        `SELECT (SELECT count(*)::int FROM responses WHERE conversation_id = $1) AS responses,
                (SELECT count(*)::int FROM conversations WHERE id = $1) AS conversations`,
        [conversation],
      );
      expect(left).toEqual([{ responses: 0, conversations: 0 }]);
    });

    /** Deleting a streamed turn still running, in a conversation that keeps its first turn. */
    async function runningTurn() {
      const conversation = await held.conversation(ann);
      const first = await onlyResponse(conversation);
      const turn = await held.heldStream(ann, conversation);
      return { conversation, first, turn, row: turn.id.slice('resp_'.length) };
    }

    /** What the client and the tables show once the turn ended and its deletion committed. */
    async function assertDeleted(
      conversation: string,
      first: string,
      turn: { id: string; stream: StreamInFlight },
    ) {
      const events = parseSse(await turn.stream.rest()).events;
      const completed = events.find((event) => event.event === 'response.completed');
      expect(completed?.json.response).toMatchObject({ status: 'completed', output_text: 'answer A' });
      expect((await held.call(ann, 'GET', `/v1/responses/${turn.id}`)).status).toBe(404);
      const [row] = await held.app.dataSource.query<{ last_response_id: string }[]>(
        'SELECT last_response_id FROM conversations WHERE id = $1',
        [conversation],
      );
      expect(row.last_response_id).toBe(first);
      const messages = await held.app.dataSource.query('SELECT 1 FROM messages WHERE response_id = $1', [
        turn.id.slice('resp_'.length),
      ]);
      expect(messages).toEqual([]);
    }

    it('a running turn deleted before its final write holds the conversation: not written again, usage kept', async () => {
      const { conversation, first, turn, row } = await runningTurn();
      // The deletion holds the conversation and waits on the turn's row (held here)…
      await other.query('BEGIN');
      await other.query('SELECT 1 FROM responses WHERE id = $1 FOR UPDATE', [row]);
      const deletion = held.call(ann, 'DELETE', `/v1/responses/${turn.id}`);
      await waitUntil(() => lockWaiters(1), 'the deletion waiting');
      // …and the final write waits on the conversation; its snapshot still shows the row.
      turn.release();
      await waitUntil(() => lockWaiters(2), 'the final write waiting');
      await other.query('COMMIT');

      expect((await deletion).status).toBe(200);
      await assertDeleted(conversation, first, turn);
      await waitUntil(async () => {
        const pending = await held.app.dataSource.query<{ user_id: string }[]>(
          'SELECT user_id FROM usage_pending WHERE response_id = $1',
          [row],
        );
        return pending.length === 1 && pending[0].user_id === ann;
      }, 'the usage, under its user');
    });

    it('a running turn whose final write holds the conversation first is stored, then deleted', async () => {
      const { conversation, first, turn, row } = await runningTurn();
      // The final write holds the conversation and waits on its row (held here)…
      await other.query('BEGIN');
      await other.query('SELECT 1 FROM responses WHERE id = $1 FOR UPDATE', [row]);
      turn.release();
      await waitUntil(() => lockWaiters(1), 'the final write waiting');
      // …and the deletion waits on the conversation.
      const deletion = held.call(ann, 'DELETE', `/v1/responses/${turn.id}`);
      await waitUntil(() => lockWaiters(2), 'the deletion waiting');
      await other.query('COMMIT');

      expect((await deletion).status).toBe(200);
      await assertDeleted(conversation, first, turn);
    });

    it("a user's erasure takes their conversations before their responses, as a turn's final write does", async () => {
      // A user of its own: the erasure takes every conversation of theirs.
      const erin = 'erin';
      const conversation = await held.conversation(erin);
      const first = await onlyResponse(conversation);
      // A final write as turn_complete is: the conversation's row first, then its response.
      const writer = new pg.Client({ connectionString: held.app.database.url });
      await writer.connect();
      try {
        await writer.query('BEGIN');
        await writer.query('SELECT 1 FROM conversations WHERE id = $1 FOR NO KEY UPDATE', [conversation]);
        const store = new TurnStore(held.app.dataSource);
        const erasure = held.app.dataSource.transaction((manager) =>
          store.eraseUserHistory(manager, held.org.id, erin),
        );
        await waitUntil(() => lockWaiters(1), 'the erasure waiting');
        // Had the erasure taken the response first, this would wait for it while it waits for the
        // conversation: a deadlock, one of the two failed (40P01).
        const updated = await writer.query("UPDATE responses SET status = 'completed' WHERE id = $1", [
          first,
        ]);
        await writer.query('COMMIT');

        expect(updated.rowCount).toBe(1);
        expect(await erasure).toMatchObject({ conversations: 1, responses: 1 });
        expect((await held.call(erin, 'GET', `/v1/conversations/${conversation}`)).status).toBe(404);
      } finally {
        await writer.end();
      }
    });
  },
);
