import { createHash, randomUUID } from 'node:crypto';
import { MemoryService } from '../src/memory/memory.service.js';
import { call } from './support/http.js';
import { adminCli } from './support/admin-cli.js';
import type { SeededOrganization, TestApp } from './support/test-app.js';
import { startTwoOrganizations } from './support/two-organizations.js';
import { UsageFlusher } from '../src/usage/usage-flusher.service.js';

const TABLES = [
  'conversations',
  'responses',
  'messages',
  'user_claims',
  'memory_items',
  'memory_opt_outs',
  'files',
];

/** What the audit trail names an erased user by: a digest, never the id. */
const digestOf = (organizationId: string, userId: string) =>
  `sha256:${createHash('sha256').update(`${organizationId}:${userId}`).digest('hex')}`;

/** The audit trail's rows of the erasures of one user id of one organization, oldest first. */
async function erasureAudits(app: TestApp, organizationId: string, userId: string): Promise<unknown[]> {
  return app.dataSource.query(
    `SELECT actor_type, actor_id, action, resource_type, resource_id, organization_id, after
       FROM audit_log WHERE resource_type = 'user' AND resource_id = $1 ORDER BY created_at`,
    [digestOf(organizationId, userId)],
  );
}

/** The one audit row an erasure writes, by the admin API (`api_key`) or the CLI (`cli`). */
function erasureAudit(actorType: string, organizationId: string, userId: string, deleted: unknown) {
  return {
    actor_type: actorType,
    actor_id: expect.any(String),
    action: 'erased',
    resource_type: 'user',
    resource_id: digestOf(organizationId, userId),
    organization_id: organizationId,
    after: { deleted },
  };
}

describe('admin users erase', () => {
  let app: TestApp;
  let orgA: SeededOrganization;
  let orgB: SeededOrganization;
  let secondAssistantId: string;

  /** Runs the CLI in-process against the test app's database, as an administrator would. */
  const { admin } = adminCli(() => app.database.env);

  const turn = async (org: SeededOrganization, input: string, userId?: string, previous?: string) => {
    const reply = await call(app.baseUrl, 'POST', '/v1/responses', {
      key: org.keys.assistant,
      headers: userId === undefined ? {} : { 'x-user-id': userId },
      body: { model: org.assistantId, input, previous_response_id: previous && `resp_${previous}` },
    });
    expect(reply.status).toBe(200);
    return {
      responseId: (reply.body.id as string).slice('resp_'.length),
      conversationId: reply.body.conversation.id as string,
    };
  };

  /** Uploads a file as the user's application would (Files API). */
  const uploadFile = async (org: SeededOrganization, userId: string, purpose: string) => {
    const form = new FormData();
    form.append('purpose', purpose);
    form.append('file', new Blob([`${purpose} of ${userId}`], { type: 'text/plain' }), `${purpose}.txt`);
    const reply = await fetch(`${app.baseUrl}/v1/files`, {
      method: 'POST',
      headers: { 'x-api-key': org.keys.user, 'x-user-id': userId },
      body: form,
    });
    expect(reply.status).toBe(201);
  };

  /** Every row id of every table the erasure may touch. */
  async function snapshot(): Promise<Record<string, string[]>> {
    const result: Record<string, string[]> = {};
    for (const table of TABLES) {
      const rows: { id: string }[] = await app.dataSource.query(`SELECT id FROM ${table} ORDER BY id`);
      result[table] = rows.map((row) => row.id);
    }
    return result;
  }

  /** Gives a user of an organization a bit of everything: history, claims, memory, opt-outs. */
  async function populate(org: SeededOrganization, userId: string, assistantIds = [org.assistantId]) {
    const first = await turn(org, `Hello from ${userId}`, userId);
    const second = await turn(org, 'Second turn', userId, first.responseId);
    // Two continuations of one response: a branch.
    const root = await turn(org, 'Another conversation', userId);
    const branchA = await turn(org, 'Branch A', userId, root.responseId);
    const branchB = await turn(org, 'Branch B', userId, root.responseId);
    const claims = await call(app.baseUrl, 'POST', '/v1/user-claims/bulk', {
      key: org.keys.user,
      body: {
        claims: [
          { userId, claimKey: 'plan', claimValue: 'gold' },
          { userId, claimKey: 'email', claimValue: `${userId}@example.com` },
        ],
      },
    });
    expect(claims.status).toBe(200);
    const memory = app.running.app.get(MemoryService);
    for (const assistantId of assistantIds) {
      expect((await memory.saveFromModel(org.id, userId, assistantId, `${userId} likes tea`)).saved).toBe(
        true,
      );
    }
    await memory.optOut(org.id, userId, org.assistantId);
    await memory.optOut(org.id, userId, null);
    // The user's own file goes with them; a file they uploaded for the organization stays.
    await uploadFile(org, userId, 'user_data');
    await uploadFile(org, userId, 'assistants');
    return {
      conversations: [first.conversationId, root.conversationId],
      responses: [first, second, root, branchA, branchB].map((t) => t.responseId),
    };
  }

  beforeAll(async () => {
    ({ app, orgA, orgB, secondAssistantId } = await startTwoOrganizations('erase'));
  });
  afterAll(async () => {
    await app?.close();
  });

  it('removes every row of the user in that organization, in one transaction, and nothing else', async () => {
    // Memory with two assistants.
    const erin = await populate(orgA, 'erin', [orgA.assistantId, secondAssistantId]);
    await populate(orgA, 'other');
    await populate(orgB, 'erin');
    const anonymous = await turn(orgA, 'Nobody’s turn');
    // By construction every turn lives in its user's conversation; a stray one must still go.
    const strayResponse = randomUUID();
    const strayMessage = randomUUID();
    await app.dataSource.query(
      `INSERT INTO responses (id, organization_id, assistant_id, conversation_id, previous_response_id, user_id, status,
                              depth, input, output, output_text, transcript, created_at, completed_at)
       VALUES ($1, $2, $3, $4, $5, 'erin', 'completed', 2, '[]', '[]', '', '[]', now(), now())`,
      [strayResponse, orgA.id, orgA.assistantId, anonymous.conversationId, anonymous.responseId],
    );
    await app.dataSource.query(
      `INSERT INTO messages (id, organization_id, conversation_id, response_id, user_id, role, content, position, created_at)
       VALUES ($1, $2, $3, $4, 'erin', 'user', 'stray', 0, now())`,
      [strayMessage, orgA.id, anonymous.conversationId, strayResponse],
    );

    const erinsRows = async () => {
      const ids = async (sql: string, parameters: unknown[]) =>
        (await app.dataSource.query<{ id: string }[]>(sql, parameters)).map((row) => row.id);
      const responses = [...erin.responses, strayResponse];
      return {
        conversations: erin.conversations,
        responses,
        messages: await ids('SELECT id FROM messages WHERE response_id = ANY($1::uuid[])', [responses]),
        user_claims: await ids(`SELECT id FROM user_claims WHERE organization_id = $1 AND user_id = 'erin'`, [
          orgA.id,
        ]),
        memory_items: await ids(
          `SELECT id FROM memory_items WHERE organization_id = $1 AND user_id = 'erin'`,
          [orgA.id],
        ),
        memory_opt_outs: await ids(
          `SELECT id FROM memory_opt_outs WHERE organization_id = $1 AND user_id = 'erin'`,
          [orgA.id],
        ),
        files: await ids(`SELECT id FROM files WHERE organization_id = $1 AND user_id = 'erin'`, [orgA.id]),
      } as Record<string, string[]>;
    };
    const targeted = await erinsRows();
    expect(targeted.messages).toHaveLength(11);
    expect(targeted.files).toHaveLength(1);
    const before = await snapshot();
    const usage = async (organizationId: string) =>
      (
        await app.dataSource.query(
          `SELECT sum(turns)::int AS turns, sum(input_tokens)::int AS input,
                  count(*) FILTER (WHERE user_id = 'erin')::int AS erin_rows
             FROM usage_daily WHERE organization_id = $1`,
          [organizationId],
        )
      )[0];
    // The turns' usage is flushed into the rollups before they are read (docs/usage.md, "Freshness").
    await app.running.app.get(UsageFlusher).flush();
    const usageBefore = { a: await usage(orgA.id), b: await usage(orgB.id) };
    expect(usageBefore.a.erin_rows).toBeGreaterThan(0);

    const run = await admin('users', 'erase', '--org', 'erase-a', '--user', 'erin', '--json');
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(run.stdout)).toEqual({
      organization: { id: orgA.id, slug: 'erase-a' },
      userId: 'erin',
      deleted: {
        conversations: 2,
        responses: 6,
        messages: 11,
        claims: 2,
        memoryItems: 2,
        memoryOptOuts: 2,
        files: 1,
      },
    });

    // One audit row, as the admin API writes, the caller the operating-system user; the
    // append-only trail names the user by a digest only.
    const audits = await erasureAudits(app, orgA.id, 'erin');
    expect(audits).toEqual([erasureAudit('cli', orgA.id, 'erin', JSON.parse(run.stdout).deleted)]);
    expect(JSON.stringify(audits)).not.toContain('"erin"');

    // Exactly erin's rows of organization A are gone; every other row is still there.
    const after = await snapshot();
    for (const table of TABLES) {
      const gone = new Set(targeted[table]);
      expect({ table, ids: after[table] }).toEqual({
        table,
        ids: before[table].filter((id) => !gone.has(id)),
      });
    }
    for (const table of TABLES) {
      const [{ count }] = await app.dataSource.query(
        `SELECT count(*)::int AS count FROM ${table} WHERE organization_id = $1 AND user_id = 'erin'`,
        [orgA.id],
      );
      expect({ table, count }).toEqual({ table, count: 0 });
    }

    // The organization's usage keeps its totals, with erin's share folded into the anonymous rows.
    expect(await usage(orgA.id)).toEqual({ ...usageBefore.a, erin_rows: 0 });
    expect(await usage(orgB.id)).toEqual(usageBefore.b);

    // Through the API: erin of A has nothing left; other users and erin of B are untouched.
    const asUser = (org: SeededOrganization, userId: string, path: string) =>
      call(app.baseUrl, 'GET', path, { key: org.keys.user, headers: { 'x-user-id': userId } });
    expect((await asUser(orgA, 'erin', '/v1/chat/history/conversations')).body).toEqual([]);
    expect((await asUser(orgA, 'erin', '/v1/memory')).body).toMatchObject({ data: [], optedOut: false });
    expect((await asUser(orgA, 'erin', '/user-claims/erin')).body).toEqual([]);
    expect((await asUser(orgA, 'other', '/v1/chat/history/conversations')).body).toHaveLength(2);
    expect((await asUser(orgB, 'erin', '/v1/chat/history/conversations')).body).toHaveLength(2);
    expect((await asUser(orgB, 'erin', '/v1/memory')).body).toMatchObject({ optedOut: true });
    expect((await asUser(orgB, 'erin', '/user-claims/erin')).body).toHaveLength(2);

    // An erased response can no longer be continued; the anonymous conversation still can.
    const continued = await call(app.baseUrl, 'POST', '/v1/responses', {
      key: orgA.keys.assistant,
      headers: { 'x-user-id': 'erin' },
      body: { model: orgA.assistantId, input: 'again', previous_response_id: `resp_${erin.responses[1]}` },
    });
    expect(continued.status).toBe(404);
    expect(continued.body.error.code).toBe('response_not_found');
    await turn(orgA, 'Still here', undefined, anonymous.responseId);

    // A second run finds nothing to delete.
    const again = await admin('users', 'erase', '--org', orgA.id, '--user', 'erin', '--json');
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout).deleted).toEqual({
      conversations: 0,
      responses: 0,
      messages: 0,
      claims: 0,
      memoryItems: 0,
      memoryOptOuts: 0,
      files: 0,
    });
  });

  it('changes nothing when any part of the erasure fails', async () => {
    await populate(orgA, 'frida');
    // Make the last delete of the transaction fail.
    await app.dataSource.query(`
      CREATE FUNCTION refuse_delete() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'refused for the test'; END $$`);
    await app.dataSource.query(
      'CREATE TRIGGER refuse_delete BEFORE DELETE ON memory_opt_outs FOR EACH ROW EXECUTE FUNCTION refuse_delete()',
    );
    try {
      const before = await snapshot();
      const run = await admin('users', 'erase', '--org', 'erase-a', '--user', 'frida');
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/^error: /);
      expect(await snapshot()).toEqual(before);
      // Its audit row was in its transaction: gone with it.
      expect(await erasureAudits(app, orgA.id, 'frida')).toEqual([]);
    } finally {
      await app.dataSource.query('DROP TRIGGER refuse_delete ON memory_opt_outs');
      await app.dataSource.query('DROP FUNCTION refuse_delete()');
    }
    const run = await admin('users', 'erase', '--org', 'erase-a', '--user', 'frida');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      'Erased user "frida" in erase-a: 2 conversations, 5 responses, 10 messages, 2 claims, 1 memory item, 2 memory opt-outs, 1 file.\n',
    );
    expect(await erasureAudits(app, orgA.id, 'frida')).toHaveLength(1);
  });

  it("erases over the admin API, scoped to the caller's organization and audited with the change", async () => {
    await populate(orgA, 'gus');
    await populate(orgB, 'gus');
    const erase = (org: SeededOrganization, target: string, userId: string) =>
      call(app.baseUrl, 'DELETE', `/admin/v1/organizations/${target}/users/${encodeURIComponent(userId)}`, {
        headers: { authorization: `Bearer ${org.keys.admin}` },
      });
    // Another organization's admin key: the same 404 as for one that does not exist, nothing erased.
    const across = await erase(orgB, 'erase-a', 'gus');
    expect([across.status, across.body.error.code]).toEqual([404, 'not_found']);
    // A key without the admin scope never reaches it.
    const notAdmin = await call(app.baseUrl, 'DELETE', '/admin/v1/organizations/erase-a/users/gus', {
      headers: { authorization: `Bearer ${orgA.keys.user}` },
    });
    expect(notAdmin.status).toBe(403);

    const reply = await erase(orgA, 'erase-a', 'gus');
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      object: 'user.erasure',
      organization: { id: orgA.id, slug: 'erase-a' },
      userId: 'gus',
      deleted: {
        conversations: 2,
        responses: 5,
        messages: 10,
        claims: 2,
        memoryItems: 1,
        memoryOptOuts: 2,
        files: 1,
      },
    });
    for (const [org, left] of [
      [orgA, 0],
      [orgB, 2],
    ] as const) {
      const history = await call(app.baseUrl, 'GET', '/v1/chat/history/conversations', {
        key: org.keys.user,
        headers: { 'x-user-id': 'gus' },
      });
      expect(history.body).toHaveLength(left);
    }
    // One audit row, in the erasure's transaction; the append-only trail names the user by a digest only.
    const rows = await erasureAudits(app, orgA.id, 'gus');
    expect(rows).toEqual([erasureAudit('api_key', orgA.id, 'gus', reply.body.deleted)]);
    expect(JSON.stringify(rows)).not.toContain('"gus"');
    const tooLong = await erase(orgA, 'erase-a', 'x'.repeat(257));
    expect([tooLong.status, tooLong.body.error.message]).toEqual([400, 'userId must be 1 to 256 characters']);
  });

  it('refuses an unknown organization or a missing or over-long user id', async () => {
    const unknown = await admin('users', 'erase', '--org', 'nope', '--user', 'erin');
    expect(unknown).toEqual({ code: 1, stdout: '', stderr: 'error: organization "nope" not found\n' });
    const missing = await admin('users', 'erase', '--org', 'erase-a');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('missing --user');
    const tooLong = await admin('users', 'erase', '--org', 'erase-a', '--user', 'x'.repeat(257));
    expect(tooLong.code).toBe(1);
    expect(tooLong.stderr).toContain('--user must be 1 to 256 characters');
    const help = await admin('users', 'erase', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain(
      'usage: npx switchboard-admin users erase --org <slug|id> --user <userId> [--json]',
    );
  });
});
