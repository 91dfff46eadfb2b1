import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAdminCli } from '../support/admin-cli.js';
import { call, type ApiReply } from '../support/http.js';
import { startTestApp, type SeededOrganization, type TestApp } from '../support/test-app.js';

/** A REST tool whose literal header is a credential: the trail keeps `[redacted]` instead. */
const TOOL_CONFIG = {
  method: 'GET',
  urlTemplate: 'https://orders.example.test/orders/{id}',
  headers: { 'x-orders-token': 'literal-secret-value' },
  parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
};

/**
 * The audit log can be trusted: every path (HTTP, `apply`, the CLI's `apply`) records the row
 * before and after, secrets redacted; refused requests of an admin caller are recorded; the
 * request id is the server's; the database itself refuses to change or delete a row; and a change
 * whose audit row cannot be written does not happen.
 */
describe('audit log', () => {
  let app: TestApp;
  let acme: SeededOrganization;
  let globex: SeededOrganization;
  let workDir: string;

  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.seedOrganization('acme');
    globex = await app.seedOrganization('globex');
    workDir = await mkdtemp(join(tmpdir(), 'switchboard-audit-'));
  });

  afterAll(async () => {
    await app?.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  const admin = (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<ApiReply> =>
    call(app.baseUrl, method, `/admin/v1${path}`, {
      headers: { authorization: `Bearer ${acme.keys.admin}`, ...headers },
      body,
    });
  const rows = (where: string, params: unknown[]): Promise<any[]> =>
    app.dataSource.query(
      `SELECT actor_type, actor_id, action, resource_type, resource_id, organization_id, before, after,
              request_id, client_request_id
         FROM audit_log WHERE ${where} ORDER BY created_at, id`,
      params,
    );

  it('records before and after for apply over HTTP, secrets redacted', async () => {
    const document = {
      organizations: [{ slug: 'acme', tools: [{ name: 'orders', kind: 'rest', config: TOOL_CONFIG }] }],
    };
    const created = await admin('POST', '/apply', document);
    expect(created.status).toBe(200);
    const toolId = created.body.changes.find((change: any) => change.kind === 'tool').id;
    const [creation] = await rows('resource_id = $1', [toolId]);
    expect(creation).toMatchObject({ actor_type: 'api_key', action: 'created', before: null });
    expect(creation.after).toMatchObject({ id: toolId, name: 'orders', organization_id: acme.id });
    expect(creation.after.config.headers).toEqual({ 'x-orders-token': '[redacted]' });
    expect(JSON.stringify(creation)).not.toContain('literal-secret-value');

    const changed = { ...TOOL_CONFIG, urlTemplate: 'https://orders.example.test/v2/orders/{id}' };
    document.organizations[0].tools[0].config = changed;
    expect((await admin('POST', '/apply', document)).status).toBe(200);
    const [, update] = await rows('resource_id = $1', [toolId]);
    expect(update.action).toBe('updated');
    expect(update.before.config.urlTemplate).toBe(TOOL_CONFIG.urlTemplate);
    expect(update.after.config.urlTemplate).toBe(changed.urlTemplate);
  });

  it("records before and after for the CLI's apply, as the operating-system user", async () => {
    const file = join(workDir, 'cli.json');
    await writeFile(file, JSON.stringify({ organizations: [{ slug: 'globex', name: 'Globex by CLI' }] }));
    const run = await runAdminCli(['apply', '-f', file, '--json'], {
      ...app.database.env,
      INIT_CWD: workDir,
    });
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    const [row] = await rows("resource_id = $1 AND actor_type = 'cli'", [globex.id]);
    expect(row).toMatchObject({
      action: 'updated',
      resource_type: 'organization',
      organization_id: globex.id,
    });
    expect(row.actor_id).toBeTruthy();
    expect(row.before.name).not.toBe('Globex by CLI');
    expect(row.after.name).toBe('Globex by CLI');
  });

  it("records before and after for the CLI's other write commands", async () => {
    const env = { ...app.database.env, INIT_CWD: workDir };
    const created = await runAdminCli(
      ['assistants', 'create', '--org', 'globex', '--name', 'FromCli', '--json'],
      env,
    );
    expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' });
    const assistantId = created.json.id.replace(/^asst_/, '');
    const [creation] = await rows("resource_id = $1 AND actor_type = 'cli'", [assistantId]);
    expect(creation).toMatchObject({ action: 'created', before: null, organization_id: globex.id });
    expect(creation.after).toMatchObject({ name: 'FromCli' });

    const keyId = (
      await app.dataSource.query('SELECT id FROM api_keys WHERE organization_id = $1 LIMIT 1', [globex.id])
    )[0].id;
    const revoked = await runAdminCli(['keys', 'revoke', keyId, '--org', 'globex', '--json'], env);
    expect(revoked.code).toBe(0);
    const [revocation] = await rows("resource_id = $1 AND actor_type = 'cli'", [keyId]);
    expect(revocation).toMatchObject({ action: 'revoked', organization_id: globex.id });
    expect(revocation.before.revoked_at).toBeNull();
    expect(revocation.after.revoked_at).toBeTruthy();
    expect(JSON.stringify(revocation)).not.toMatch(/key_hash/);
  });

  it('records before and after for a direct HTTP change, with the server request id', async () => {
    const put = await admin('PUT', '/organizations/acme/assistants/Helper', { instructions: 'v1' }, {});
    expect(put.status).toBe(200);
    const again = await admin(
      'PUT',
      '/organizations/acme/assistants/Helper',
      { instructions: 'v2' },
      { 'x-request-id': 'client-chosen-id' },
    );
    expect(again.status).toBe(200);
    expect(again.headers.get('x-request-id')).toBe('client-chosen-id');
    const [, update] = await rows('resource_id = $1', [again.body.id]);
    expect(update.before).toMatchObject({ instructions: 'v1' });
    expect(update.after).toMatchObject({ instructions: 'v2' });
    expect(update.request_id).toMatch(/^req_[0-9a-f-]{36}$/);
    expect(update.client_request_id).toBe('client-chosen-id');
    // The API shows both.
    const page = await admin('GET', '/audit-log?limit=5');
    const shown = page.body.data.find((entry: any) => entry.requestId === update.request_id);
    expect(shown).toMatchObject({ clientRequestId: 'client-chosen-id', action: 'updated' });
  });

  it('records what an admin caller was refused: another organization (404) and a platform field (403)', async () => {
    const probe = await admin('GET', '/organizations/globex/assistants');
    expect(probe.status).toBe(404);
    const raised = await admin('PUT', '/organizations/acme', { rateLimitPerMinute: 100000 });
    expect(raised.status).toBe(403);
    const denied = await rows("action = 'denied' AND organization_id = $1", [acme.id]);
    expect(denied).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          actor_type: 'api_key',
          resource_type: 'request',
          resource_id: 'GET /admin/v1/organizations/globex/assistants',
          after: { status: 404, code: 'not_found' },
        }),
        expect.objectContaining({
          resource_id: 'PUT /admin/v1/organizations/acme',
          after: { status: 403, code: 'insufficient_scope' },
        }),
      ]),
    );
    expect(denied.every((row) => /^req_/.test(row.request_id))).toBe(true);
    // globex's own trail has no row about acme's probe.
    expect(await rows("action = 'denied' AND organization_id = $1", [globex.id])).toEqual([]);
  });

  it('is append-only in the database: UPDATE, DELETE and TRUNCATE are refused', async () => {
    const before = await app.dataSource.query('SELECT count(*)::int AS n FROM audit_log');
    expect(before[0].n).toBeGreaterThan(0);
    await expect(app.dataSource.query(`UPDATE audit_log SET action = 'forged'`)).rejects.toThrow(
      /append-only/,
    );
    await expect(app.dataSource.query('DELETE FROM audit_log')).rejects.toThrow(/append-only/);
    await expect(app.dataSource.query('TRUNCATE audit_log')).rejects.toThrow(/append-only/);
    expect(await app.dataSource.query('SELECT count(*)::int AS n FROM audit_log')).toEqual(before);
    expect(await rows(`action = 'forged'`, [])).toEqual([]);
  });

  it('rolls the change back when its audit row cannot be written', async () => {
    // Make the audit insert fail for assistants only, as a full disk or a constraint would.
    await app.dataSource
      .query(`CREATE FUNCTION refuse_assistant_audit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.resource_type = 'assistant' THEN RAISE EXCEPTION 'audit insert failed'; END IF;
        RETURN NEW;
      END $$`);
    await app.dataSource.query(
      'CREATE TRIGGER refuse_assistant_audit BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION refuse_assistant_audit()',
    );
    try {
      const assistants = () =>
        app.dataSource.query('SELECT name FROM assistants WHERE organization_id = $1 AND name = $2', [
          acme.id,
          'Doomed',
        ]);
      const put = await admin('PUT', '/organizations/acme/assistants/Doomed', { instructions: 'x' });
      expect(put.status).toBe(500);
      expect(put.body.error.code).toBe('server_error');
      expect(JSON.stringify(put.body)).not.toContain('audit insert failed');
      expect(await assistants()).toEqual([]);

      const applied = await admin('POST', '/apply', {
        organizations: [{ slug: 'acme', name: 'Acme renamed', assistants: [{ name: 'Doomed' }] }],
      });
      expect(applied.status).toBe(500);
      expect(await assistants()).toEqual([]);
      const [organization] = await app.dataSource.query('SELECT name FROM organizations WHERE id = $1', [
        acme.id,
      ]);
      expect(organization.name).not.toBe('Acme renamed');
    } finally {
      await app.dataSource.query('DROP TRIGGER refuse_assistant_audit ON audit_log');
      await app.dataSource.query('DROP FUNCTION refuse_assistant_audit()');
    }
  });
});
