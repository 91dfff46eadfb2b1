import { setTimeout as sleep } from 'node:timers/promises';
import { FakeUpstream } from '../support/fake-upstream.js';
import { call, type ApiReply } from '../support/http.js';
import { startTestApp, type SeededOrganization, type TestApp } from '../support/test-app.js';
import { startTestIdentityProvider, type TestIdentityProvider } from '../support/test-identity-provider.js';

const ADMIN_GROUP = '/platform/admins';
const ADMIN_AUDIENCE = 'switchboard-admin';

/**
 * Small shares, so one organization reaches them with a handful of requests. A share is reserved
 * headroom: past it an organization is refused only when less than a share would stay free, so
 * alone it runs 3 background turns (5 - 2) and holds 4 responses in flight (7 - 3).
 */
const FAIRNESS_ENV = {
  MAX_IN_FLIGHT_RESPONSES: '7',
  MAX_IN_FLIGHT_PER_ORGANIZATION: '3',
  BACKGROUND_MAX_RUNNING: '5',
  BACKGROUND_MAX_RUNNING_PER_ORGANIZATION: '2',
  BACKGROUND_MAX_QUEUED: '2',
  BACKGROUND_MAX_QUEUED_PER_ORGANIZATION: '1',
  ADMIN_RATE_LIMIT_PER_MINUTE: '3',
  QUOTA_ASSISTANTS_PER_ORGANIZATION: '2',
  QUOTA_SPECIALISTS_PER_ASSISTANT: '1',
  QUOTA_TOOLS_PER_ORGANIZATION: '1',
  QUOTA_GATEWAYS_PER_ORGANIZATION: '1',
  // seedOrganization issues four keys (one per scope).
  QUOTA_API_KEYS_PER_ORGANIZATION: '5',
  QUOTA_ITEMS_PER_CONVERSATION: '3',
  RESUME_POLL_MS: '20',
  UPSTREAM_MAX_RETRIES: '0',
};

/** Waits until `check` holds, polling; fails after `attempts` tries instead of hanging. */
async function waitFor(what: string, check: () => Promise<boolean> | boolean, attempts = 500): Promise<void> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (await check()) return;
    await sleep(20);
  }
  throw new Error(`never happened: ${what}`);
}

function expectRefused(reply: ApiReply, status: number, code: string): void {
  expect({ status: reply.status, code: reply.body?.error?.code }).toEqual({ status, code });
  expect(Object.keys(reply.body.error).sort()).toEqual(['code', 'message', 'type']);
}

/**
 * One organization cannot starve the others: past its share of the replica, its background turns
 * and responses in flight are refused (429 with Retry-After) once only the share reserved for the
 * others is left, while another organization's turns start and finish; streams following a turn count; admin routes are rate-limited per caller;
 * stored objects have per-organization quotas (409, nothing stored).
 */
describe('fairness between organizations', () => {
  let held: FakeUpstream;
  let quick: FakeUpstream;
  let idp: TestIdentityProvider;
  let app: TestApp;
  let flood: SeededOrganization;
  let calm: SeededOrganization;

  beforeAll(async () => {
    held = await new FakeUpstream().start();
    held.setFallback({ hang: true });
    quick = await new FakeUpstream().start();
    quick.setFallback({ text: 'calm answer' });
    idp = await startTestIdentityProvider({ alice: [ADMIN_GROUP], carol: [ADMIN_GROUP] });
    app = await startTestApp({
      ...FAIRNESS_ENV,
      OIDC_ISSUER: idp.issuer,
      OIDC_CLIENT_ID: idp.audience,
      ADMIN_GROUP,
      ADMIN_AUDIENCE,
    });
    const model = (upstream: FakeUpstream) => ({
      provider: 'openai-compatible',
      baseUrl: upstream.url,
      model: 'm',
    });
    flood = await app.seedOrganization('flood', model(held));
    calm = await app.seedOrganization('calm', model(quick));
  });

  afterAll(async () => {
    await app?.close();
    await held?.stop();
    await quick?.stop();
    await idp?.close();
  });

  const respond = (org: SeededOrganization, body: Record<string, unknown>) =>
    call(app.baseUrl, 'POST', '/v1/responses', {
      key: org.keys.full_access,
      body: { model: `asst_${org.assistantId}`, input: 'hello', ...body },
    });
  const responseRows = async (org: SeededOrganization): Promise<number> =>
    Number(
      (
        await app.dataSource.query('SELECT count(*)::int AS n FROM responses WHERE organization_id = $1', [
          org.id,
        ])
      )[0].n,
    );

  describe('background turns and responses in flight', () => {
    const floodIds: string[] = [];

    afterAll(async () => {
      for (const id of floodIds) {
        await call(app.baseUrl, 'POST', `/v1/responses/${id}/cancel`, { key: flood.keys.full_access });
      }
    });

    it('holds a flooding organization to its share while another organization is served', async () => {
      // Alone, the flood runs three turns, one past its running share of two, held open by the
      // upstream: two running slots stay free for others. A fourth waits (its queue share).
      for (let i = 0; i < 4; i++) {
        const created = await respond(flood, { background: true });
        expect(created.status).toBe(200);
        expect(created.body.status).toBe('queued');
        floodIds.push(created.body.id);
        if (i === 2) await waitFor('three flood turns at the upstream', () => held.requests.length === 3);
      }
      const waiting = await call(app.baseUrl, 'GET', `/v1/responses/${floodIds[3]}`, {
        key: flood.keys.full_access,
      });
      expect(waiting.body.status).toBe('queued');
      expect(held.requests).toHaveLength(3);

      const rowsBefore = await responseRows(flood);
      const refused = await respond(flood, { background: true });
      expectRefused(refused, 429, 'concurrency_limit_exceeded');
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(await responseRows(flood)).toBe(rowsBefore); // nothing stored for the refused turn

      // The other organization's background turn starts and completes meanwhile.
      const other = await respond(calm, { background: true });
      expect(other.status).toBe(200);
      let finished: any;
      await waitFor('the calm turn to complete', async () => {
        finished = (
          await call(app.baseUrl, 'GET', `/v1/responses/${other.body.id}`, { key: calm.keys.full_access })
        ).body;
        return finished.status === 'completed';
      });
      expect(finished.output_text ?? finished.output?.[0]?.content?.[0]?.text).toBe('calm answer');
    });

    it('counts running background turns and resumed streams against the organization share', async () => {
      // Three running turns hold the flood's share of three slots; one follower still fits, as three
      // of the seven stay free, a second does not (it would leave two).
      const first = await openFollower(floodIds[0]);
      expect(first.status).toBe(200);
      try {
        const second = await call(app.baseUrl, 'GET', `/v1/responses/${floodIds[1]}?stream=true`, {
          key: flood.keys.full_access,
        });
        expectRefused(second, 429, 'concurrency_limit_exceeded');
        expect(second.headers.get('retry-after')).toBe('1');
        // A plain response of the flood is refused too, before anything is stored…
        const rowsBefore = await responseRows(flood);
        expectRefused(await respond(flood, {}), 429, 'concurrency_limit_exceeded');
        expect(await responseRows(flood)).toBe(rowsBefore);
        // …while the other organization is answered.
        const served = await respond(calm, {});
        expect(served.status).toBe(200);
        expect(served.body.status).toBe('completed');
      } finally {
        first.close();
      }
      // The follower's slot comes back when its client leaves: another follower is let in.
      await waitFor('the follower slot to be released', async () => {
        const next = await openFollower(floodIds[1]);
        next.close();
        return next.status === 200;
      });
    });

    /** Opens a resumed stream of a flood turn; its status is known once the headers arrived. */
    async function openFollower(id: string): Promise<{ status: number; close: () => void }> {
      const controller = new AbortController();
      const res = await fetch(`${app.baseUrl}/v1/responses/${id}?stream=true`, {
        headers: { 'x-api-key': flood.keys.full_access },
        signal: controller.signal,
      });
      if (res.status !== 200) await res.text();
      return { status: res.status, close: () => controller.abort() };
    }
  });

  describe('admin routes', () => {
    it('rate-limits an organization admin key with its organization limit', async () => {
      const org = await app.seedOrganization('limited');
      await app.dataSource.query('UPDATE organizations SET rate_limit_per_minute = 2 WHERE id = $1', [
        org.id,
      ]);
      const list = () =>
        call(app.baseUrl, 'GET', '/admin/v1/organizations/limited/assistants', {
          headers: { authorization: `Bearer ${org.keys.admin}` },
        });
      expect((await list()).status).toBe(200);
      expect((await list()).status).toBe(200);
      const refused = await list();
      expectRefused(refused, 429, 'rate_limit_exceeded');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    });

    it('rate-limits each platform administrator on its own', async () => {
      const alice = await idp.mint({ sub: 'alice', groups: [ADMIN_GROUP], aud: ADMIN_AUDIENCE });
      const carol = await idp.mint({ sub: 'carol', groups: [ADMIN_GROUP], aud: ADMIN_AUDIENCE });
      const audit = (token: string) =>
        call(app.baseUrl, 'GET', '/admin/v1/audit-log?limit=1', {
          headers: { authorization: `Bearer ${token}` },
        });
      for (let i = 0; i < 3; i++) expect((await audit(alice)).status).toBe(200);
      const refused = await audit(alice);
      expectRefused(refused, 429, 'rate_limit_exceeded');
      expect(refused.headers.get('retry-after')).toBeTruthy();
      expect((await audit(carol)).status).toBe(200);
      // The apply route is limited as well: alice's next apply is refused and changes nothing.
      const applied = await call(app.baseUrl, 'POST', '/admin/v1/apply', {
        headers: { authorization: `Bearer ${alice}` },
        body: { organizations: [{ slug: 'limited', name: 'renamed by a flood' }] },
      });
      expectRefused(applied, 429, 'rate_limit_exceeded');
      const [row] = await app.dataSource.query('SELECT name FROM organizations WHERE slug = $1', ['limited']);
      expect(row.name).not.toBe('renamed by a flood');
    });
  });

  describe('stored-object quotas', () => {
    let org: SeededOrganization;
    const admin = (method: string, path: string, body?: unknown) =>
      call(app.baseUrl, method, `/admin/v1/organizations/quota${path}`, {
        headers: { authorization: `Bearer ${org.keys.admin}` },
        body,
      });
    const count = async (table: string, extra = ''): Promise<number> =>
      Number(
        (
          await app.dataSource.query(
            `SELECT count(*)::int AS n FROM ${table} WHERE organization_id = $1 ${extra}`,
            [org.id],
          )
        )[0].n,
      );

    beforeAll(async () => {
      org = await app.seedOrganization('quota');
    });

    it('refuses an assistant past the quota, over HTTP and in apply, storing nothing', async () => {
      expect((await admin('PUT', '/assistants/Second', { instructions: 'two' })).status).toBe(200);
      expect(await count('assistants')).toBe(2);
      const refused = await admin('PUT', '/assistants/Third', { instructions: 'three' });
      expectRefused(refused, 409, 'quota_exceeded');
      expect(refused.body.error.message).toContain('QUOTA_ASSISTANTS_PER_ORGANIZATION');
      const auditBefore = await count('audit_log', "AND action <> 'denied'");
      const applied = await call(app.baseUrl, 'POST', '/admin/v1/apply', {
        headers: { authorization: `Bearer ${org.keys.admin}` },
        body: { organizations: [{ slug: 'quota', name: 'applied', assistants: [{ name: 'Fourth' }] }] },
      });
      expectRefused(applied, 409, 'quota_exceeded');
      expect(await count('assistants')).toBe(2);
      const [row] = await app.dataSource.query('SELECT name FROM organizations WHERE id = $1', [org.id]);
      expect(row.name).not.toBe('applied'); // the whole apply rolled back
      expect(await count('audit_log', "AND action <> 'denied'")).toBe(auditBefore);
    });

    it('refuses specialists, tools, gateways and keys past their quotas, storing nothing', async () => {
      const specialists = '/assistants/Second/specialists';
      expect((await admin('PUT', `${specialists}/billing`, { role: 'Invoices' })).status).toBe(200);
      expectRefused(await admin('PUT', `${specialists}/refunds`, { role: 'Refunds' }), 409, 'quota_exceeded');
      expect(await count('specialists')).toBe(1);

      const tool = {
        kind: 'rest',
        config: {
          method: 'GET',
          urlTemplate: 'https://orders.example.test/orders/{id}',
          parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
        },
      };
      expect((await admin('PUT', '/tools/first', tool)).status).toBe(200);
      expectRefused(await admin('PUT', '/tools/second', tool), 409, 'quota_exceeded');
      expect(await count('tools')).toBe(1);

      expect((await admin('PUT', '/gateways/quota-one', { tools: [] })).status).toBe(200);
      expectRefused(await admin('PUT', '/gateways/quota-two', { tools: [] }), 409, 'quota_exceeded');
      expect(await count('mcp_gateways')).toBe(1);

      expect((await admin('POST', '/keys', { name: 'fifth', scopes: ['user'] })).status).toBe(201);
      const refusedKey = await admin('POST', '/keys', { name: 'sixth', scopes: ['user'] });
      expectRefused(refusedKey, 409, 'quota_exceeded');
      expect(refusedKey.body.secret).toBeUndefined();
      expect(await count('api_keys')).toBe(5);
    });

    it('refuses conversation items past the quota', async () => {
      const headers = { 'x-user-id': 'u1' };
      const created = await call(app.baseUrl, 'POST', '/v1/conversations', {
        key: org.keys.full_access,
        headers,
        body: { items: [{ role: 'user', content: 'one' }] },
      });
      expect(created.status).toBe(200);
      const path = `/v1/conversations/${created.body.id}/items`;
      const add = (n: number) =>
        call(app.baseUrl, 'POST', path, {
          key: org.keys.full_access,
          headers,
          body: { items: Array.from({ length: n }, (_, i) => ({ role: 'user', content: `more ${i}` })) },
        });
      expect((await add(2)).status).toBe(200);
      expectRefused(await add(1), 409, 'quota_exceeded');
      const items = await call(app.baseUrl, 'GET', path, { key: org.keys.full_access, headers });
      expect(items.body.data).toHaveLength(3);
      // A turn on the full conversation is refused before the model is called.
      const turn = await call(app.baseUrl, 'POST', '/v1/responses', {
        key: org.keys.full_access,
        headers,
        body: { model: `asst_${org.assistantId}`, input: 'and another', conversation: created.body.id },
      });
      expectRefused(turn, 409, 'quota_exceeded');
    });
  });
});
