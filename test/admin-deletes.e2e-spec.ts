import { call, type ApiReply } from './support/http.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

/** A REST tool on a public host (nothing is called: the tool is only stored and deleted). */
const TOOL = {
  kind: 'rest',
  description: 'Status of an order',
  config: {
    method: 'GET',
    urlTemplate: 'https://orders.example.com/orders/{id}',
    parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
  },
};

/**
 * The admin API's deletes of tools, specialists and MCP gateways (docs/admin-api.md): each
 * removes the row with a `deleted` audit row in its transaction, is 404 for what does not exist
 * or is another organization's (which stays untouched), and needs the `admin` scope.
 */
describe('admin HTTP API: deletes', () => {
  let app: TestApp;
  let acme: SeededOrganization;
  let globex: SeededOrganization;

  const admin = (method: string, path: string, key: string, body?: unknown): Promise<ApiReply> =>
    call(app.baseUrl, method, `/admin/v1/organizations${path}`, {
      headers: { authorization: `Bearer ${key}` },
      body,
    });
  const deletedRows = (resourceId: string): Promise<any[]> =>
    app.dataSource.query(
      "SELECT action, resource_type, organization_id, before, after, actor_type FROM audit_log WHERE resource_id = $1 AND action = 'deleted'",
      [resourceId],
    );

  beforeAll(async () => {
    app = await startTestApp();
    acme = await app.seedOrganization('acme');
    globex = await app.seedOrganization('globex');
  });
  afterAll(async () => {
    await app?.close();
  });

  async function seed(slug: string, key: string) {
    const tool = await admin('PUT', `/${slug}/tools/lookup`, key, TOOL);
    const gateway = await admin('PUT', `/${slug}/gateways/${slug}-ide`, key, { tools: ['lookup'] });
    const specialist = await admin(
      'PUT',
      `/${slug}/assistants/${slug}%20assistant/specialists/billing`,
      key,
      {
        role: 'Invoices',
      },
    );
    expect([tool.status, gateway.status, specialist.status]).toEqual([200, 200, 200]);
    return { tool: tool.body, gateway: gateway.body, specialist: specialist.body };
  }

  it('deletes a tool, a gateway and a specialist, each with its audit row', async () => {
    const made = await seed('acme', acme.keys.admin);
    const cases = [
      ['/acme/tools/lookup', made.tool, 'tool', '/acme/tools'],
      ['/acme/gateways/acme-ide', made.gateway, 'gateway', '/acme/gateways'],
      [
        `/acme/assistants/asst_${acme.assistantId}/specialists/billing`,
        made.specialist,
        'specialist',
        `/acme/assistants/${acme.assistantId}/specialists`,
      ],
    ] as const;
    for (const [path, resource, type, list] of cases) {
      const removed = await admin('DELETE', path, acme.keys.admin);
      expect([removed.status, removed.body]).toEqual([
        200,
        { id: resource.id, name: resource.name, object: type, deleted: true },
      ]);
      expect((await admin('GET', list, acme.keys.admin)).body.data).toEqual([]);
      const rows = await deletedRows(resource.id);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        action: 'deleted',
        resource_type: type,
        organization_id: acme.id,
        after: null,
        actor_type: 'api_key',
      });
      expect(rows[0].before).toMatchObject({ id: resource.id, name: resource.name });
      // Gone: a second delete is 404 and writes no second row.
      const again = await admin('DELETE', path, acme.keys.admin);
      expect([again.status, again.body.error.type]).toEqual([404, 'not_found_error']);
      expect(await deletedRows(resource.id)).toHaveLength(1);
    }
  });

  it("never reaches another organization's: 404, and the resource stays", async () => {
    const theirs = await seed('globex', globex.keys.admin);
    for (const path of [
      '/globex/tools/lookup',
      '/globex/gateways/globex-ide',
      `/globex/assistants/asst_${globex.assistantId}/specialists/billing`,
      // Acme's own path with globex's assistant: the assistant is not acme's.
      `/acme/assistants/asst_${globex.assistantId}/specialists/billing`,
    ]) {
      expect((await admin('DELETE', path, acme.keys.admin)).status).toBe(404);
    }
    // A same-named tool in acme's own organization does not exist: 404, globex's stays.
    expect((await admin('DELETE', '/acme/tools/lookup', acme.keys.admin)).status).toBe(404);
    expect((await admin('GET', '/globex/tools', globex.keys.admin)).body.data.map((t: any) => t.id)).toEqual([
      theirs.tool.id,
    ]);
    expect((await admin('GET', '/globex/gateways', globex.keys.admin)).body.data).toHaveLength(1);
    const specialists = await admin(
      'GET',
      `/globex/assistants/${globex.assistantId}/specialists`,
      globex.keys.admin,
    );
    expect(specialists.body.data).toHaveLength(1);
    expect(await deletedRows(theirs.tool.id)).toEqual([]);
  });

  it('needs the admin scope', async () => {
    const refused = await admin('DELETE', '/globex/tools/lookup', globex.keys.full_access);
    expect([refused.status, refused.body.error.code]).toEqual([403, 'insufficient_scope']);
    expect((await admin('GET', '/globex/tools', globex.keys.admin)).body.data).toHaveLength(1);
  });
});
