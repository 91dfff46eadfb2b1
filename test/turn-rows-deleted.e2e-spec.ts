import { randomUUID } from 'node:crypto';
import { call } from './support/http.js';
import type { SeededOrganization, TestApp } from './support/test-app.js';
import { startTwoOrganizations } from './support/two-organizations.js';
import { UsageRollups } from '../src/usage/usage-rollups.repository.js';

interface Turn {
  responseId: string;
  conversationId: string;
}

/**
 * A turn's rows go with whatever they belong to, now that `responses` and `messages` have no
 * foreign key to `conversations` and `usage_pending` none to `organizations` (migration
 * 1796670000201: triggers instead of the keys' cascades, docs/benchmarks.md round "dbturn"):
 * deleting a conversation, an assistant or an organization removes exactly its conversations,
 * responses, chat-history messages and pending usage, and nothing of anyone else's; a pending row
 * whose organization is gone is flushed without being added to the rollups.
 */
describe('deleting what a turn belongs to', () => {
  let app: TestApp;
  let orgA: SeededOrganization;
  let orgB: SeededOrganization;
  let secondAssistantId: string;

  beforeAll(async () => {
    ({ app, orgA, orgB, secondAssistantId } = await startTwoOrganizations('turn-rows'));
  });
  afterAll(async () => {
    await app?.close();
  });

  const turn = async (
    org: SeededOrganization,
    model: string,
    input: string,
    previous?: Turn,
  ): Promise<Turn> => {
    const reply = await call(app.baseUrl, 'POST', '/v1/responses', {
      key: org.keys.assistant,
      headers: { 'x-user-id': 'ann' },
      body: { model, input, previous_response_id: previous && `resp_${previous.responseId}` },
    });
    expect(reply.status).toBe(200);
    return {
      responseId: (reply.body.id as string).slice('resp_'.length),
      conversationId: reply.body.conversation.id as string,
    };
  };
  /** A conversation of two turns. */
  const thread = async (org: SeededOrganization, model: string): Promise<Turn[]> => {
    const first = await turn(org, model, 'Hello');
    return [first, await turn(org, model, 'And then?', first)];
  };

  const count = async (sql: string, params: unknown[]): Promise<number> =>
    Number(
      (await app.dataSource.query<{ n: number }[]>(`SELECT count(*)::int AS n FROM ${sql}`, params))[0].n,
    );
  /** The rows of these turns' conversations, responses and messages, and of the usage pending under them. */
  const rowsOf = async (turns: Turn[]) => {
    const conversations = [...new Set(turns.map((t) => t.conversationId))];
    const responses = turns.map((t) => t.responseId);
    return {
      conversations: await count('conversations WHERE id = ANY($1::uuid[])', [conversations]),
      responses: await count('responses WHERE id = ANY($1::uuid[]) OR conversation_id = ANY($2::uuid[])', [
        responses,
        conversations,
      ]),
      messages: await count(
        'messages WHERE response_id = ANY($1::uuid[]) OR conversation_id = ANY($2::uuid[])',
        [responses, conversations],
      ),
    };
  };
  const whole = (turns: Turn[]) => ({
    conversations: new Set(turns.map((t) => t.conversationId)).size,
    responses: turns.length,
    messages: turns.length * 2,
  });
  const gone = { conversations: 0, responses: 0, messages: 0 };
  /** A pending usage row of an organization (written as a turn's statement does), its response id. */
  const pendingUsage = async (
    organizationId: string,
    assistantId: string,
    userId = 'ann',
  ): Promise<string> => {
    const responseId = randomUUID();
    await app.dataSource.query(
      `INSERT INTO usage_pending (response_id, organization_id, completed_at, assistant_id, specialist, api_key_id,
                                  user_id, usage_rows)
       VALUES ($1, $2, now(), $3, '', $4, $5, $6::jsonb)`,
      [
        responseId,
        organizationId,
        assistantId,
        randomUUID(),
        userId,
        JSON.stringify([
          {
            model: 'm',
            currency: 'USD',
            turns: 1,
            input_tokens: 1,
            cached_tokens: 0,
            output_tokens: 1,
            reasoning_tokens: 0,
            cost: 0,
          },
        ]),
      ],
    );
    return responseId;
  };

  it('a deleted conversation takes its responses and messages, and only them', async () => {
    const [deleted, kept] = [await thread(orgA, orgA.assistantId), await thread(orgA, orgA.assistantId)];
    expect(await rowsOf(deleted)).toEqual(whole(deleted));
    const reply = await call(app.baseUrl, 'DELETE', `/v1/conversations/${deleted[0].conversationId}`, {
      key: orgA.keys.user,
      headers: { 'x-user-id': 'ann' },
    });
    expect(reply.status).toBe(200);
    expect(await rowsOf(deleted)).toEqual(gone);
    expect(await rowsOf(kept)).toEqual(whole(kept));
  });

  it("a deleted assistant takes its conversations' turns, and only them", async () => {
    const [deleted, kept] = [await thread(orgA, secondAssistantId), await thread(orgA, orgA.assistantId)];
    expect(await rowsOf(deleted)).toEqual(whole(deleted));
    await app.dataSource.query('DELETE FROM assistants WHERE id = $1', [secondAssistantId]);
    expect(await rowsOf(deleted)).toEqual(gone);
    expect(await rowsOf(kept)).toEqual(whole(kept));
  });

  it("a deleted organization takes its turns and its pending usage, and nothing of another's", async () => {
    const [deleted, kept] = [await thread(orgA, orgA.assistantId), await thread(orgB, orgB.assistantId)];
    const [pendingA, pendingB] = [
      await pendingUsage(orgA.id, orgA.assistantId),
      await pendingUsage(orgB.id, orgB.assistantId),
    ];
    await app.dataSource.query('DELETE FROM organizations WHERE id = $1', [orgA.id]);
    expect(await rowsOf(deleted)).toEqual(gone);
    for (const table of ['conversations', 'responses', 'messages', 'usage_pending'])
      expect([table, await count(`${table} WHERE organization_id = $1`, [orgA.id])]).toEqual([table, 0]);
    expect(await count('usage_pending WHERE response_id = $1', [pendingA])).toBe(0);
    expect(await rowsOf(kept)).toEqual(whole(kept));
    expect(await count('usage_pending WHERE response_id = $1', [pendingB])).toBe(1);
  });

  it('a pending row whose organization is gone is flushed and not added to the rollups', async () => {
    const organizationId = randomUUID();
    const [orphan, counted] = [
      await pendingUsage(organizationId, randomUUID()),
      await pendingUsage(orgB.id, orgB.assistantId, 'flushed'),
    ];
    expect(await app.running.app.get(UsageRollups).flush([orphan, counted])).toBe(2);
    expect(await count('usage_pending WHERE response_id = ANY($1::uuid[])', [[orphan, counted]])).toBe(0);
    for (const table of ['usage_daily', 'usage_hourly'])
      expect([table, await count(`${table} WHERE organization_id = $1`, [organizationId])]).toEqual([
        table,
        0,
      ]);
    expect(await count("usage_daily WHERE organization_id = $1 AND user_id = 'flushed'", [orgB.id])).toBe(1);
  });
});
