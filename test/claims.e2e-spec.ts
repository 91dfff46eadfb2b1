import { ClaimsRepository } from '../src/claims/claims.repository.js';
import { call } from './support/http.js';
import { startTestApp, type SeededOrganization, type TestApp } from './support/test-app.js';

interface ClaimRow {
  organization_id: string;
  user_id: string;
  claim_key: string;
  claim_value: unknown;
}

describe('user claims', () => {
  let app: TestApp;
  let orgA: SeededOrganization;
  let orgB: SeededOrganization;

  beforeAll(async () => {
    app = await startTestApp();
    orgA = await app.seedOrganization('claims-a');
    orgB = await app.seedOrganization('claims-b');
  });
  afterAll(async () => {
    await app?.close();
  });

  const rows = (where = 'true', parameters: unknown[] = []): Promise<ClaimRow[]> =>
    app.dataSource.query(
      `SELECT organization_id, user_id, claim_key, claim_value FROM user_claims WHERE ${where}
        ORDER BY organization_id, user_id, claim_key`,
      parameters,
    );
  const claimsOf = (organizationId: string, userId: string) =>
    rows('organization_id = $1 AND user_id = $2', [organizationId, userId]);
  const post = (path: string, body: unknown, key = orgA.keys.user) =>
    call(app.baseUrl, 'POST', path, { key, body });
  const get = (path: string, key = orgA.keys.user) => call(app.baseUrl, 'GET', path, { key });
  const del = (path: string, key = orgA.keys.user) => call(app.baseUrl, 'DELETE', path, { key });

  describe.each(['/user-claims', '/v1/user-claims'])('under %s', (base) => {
    const user = `user-${base.length}`;

    it('creates a claim and returns the record', async () => {
      const res = await post(base, { userId: user, claimKey: 'plan', claimValue: 'gold' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        userId: user,
        claimKey: 'plan',
        claimValue: 'gold',
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      expect(new Date(res.body.createdAt).toISOString()).toBe(res.body.createdAt);
      expect(await claimsOf(orgA.id, user)).toEqual([
        { organization_id: orgA.id, user_id: user, claim_key: 'plan', claim_value: 'gold' },
      ]);
    });

    it('replaces the value on a second write (upsert), keeping createdAt and one row', async () => {
      const first = await post(base, { userId: user, claimKey: 'tier', claimValue: 1 });
      const second = await post(base, { userId: user, claimKey: 'tier', claimValue: { level: 2 } });
      expect(second.status).toBe(200);
      expect(second.body.claimValue).toEqual({ level: 2 });
      expect(second.body.createdAt).toBe(first.body.createdAt);
      expect(Date.parse(second.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(first.body.updatedAt));
      const stored = (await claimsOf(orgA.id, user)).filter((row) => row.claim_key === 'tier');
      expect(stored).toEqual([expect.objectContaining({ claim_value: { level: 2 } })]);
    });

    it('reads one claim and lists a user’s claims by key; an unknown user has an empty list', async () => {
      await post(base, { userId: `${user}-list`, claimKey: 'b.key', claimValue: [1, 2] });
      await post(base, { userId: `${user}-list`, claimKey: 'a:key', claimValue: false });
      const list = await get(`${base}/${user}-list`);
      expect(list.status).toBe(200);
      expect(list.body.map((claim: { claimKey: string }) => claim.claimKey)).toEqual(['a:key', 'b.key']);
      expect(list.body[0]).toEqual({
        userId: `${user}-list`,
        claimKey: 'a:key',
        claimValue: false,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      const one = await get(`${base}/${user}-list/b.key`);
      expect(one.status).toBe(200);
      expect(one.body).toMatchObject({ userId: `${user}-list`, claimKey: 'b.key', claimValue: [1, 2] });
      const none = await get(`${base}/nobody-${user}`);
      expect(none.status).toBe(200);
      expect(none.body).toEqual([]);
    });

    it('answers 404 claim_not_found for a missing claim, and deletes for real with 204', async () => {
      const missing = await get(`${base}/${user}/no-such-key`);
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({
        error: { type: 'not_found_error', code: 'claim_not_found', message: expect.any(String) },
      });
      await post(base, { userId: user, claimKey: 'to-delete', claimValue: 'x' });
      const deleted = await del(`${base}/${user}/to-delete`);
      expect(deleted.status).toBe(204);
      expect(deleted.body).toBeUndefined();
      expect(await rows('user_id = $1 AND claim_key = $2', [user, 'to-delete'])).toEqual([]);
      expect((await get(`${base}/${user}/to-delete`)).status).toBe(404);
      const again = await del(`${base}/${user}/to-delete`);
      expect(again.status).toBe(404);
      expect(again.body.error.code).toBe('claim_not_found');
    });

    it('writes up to 50 claims in bulk and returns the records in order', async () => {
      const claims = Array.from({ length: 50 }, (_, i) => ({
        userId: `${user}-bulk`,
        claimKey: `k${String(i).padStart(2, '0')}`,
        claimValue: { i },
      }));
      const res = await post(`${base}/bulk`, { claims });
      expect(res.status).toBe(200);
      expect(res.body).toHaveLength(50);
      expect(res.body[7]).toEqual({
        userId: `${user}-bulk`,
        claimKey: 'k07',
        claimValue: { i: 7 },
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      expect(await claimsOf(orgA.id, `${user}-bulk`)).toHaveLength(50);
      // A second bulk replaces, in the same all-or-nothing way.
      const again = await post(`${base}/bulk`, {
        claims: [{ userId: `${user}-bulk`, claimKey: 'k00', claimValue: 'replaced' }],
      });
      expect(again.status).toBe(200);
      expect(again.body).toEqual([expect.objectContaining({ claimKey: 'k00', claimValue: 'replaced' })]);
      expect(await claimsOf(orgA.id, `${user}-bulk`)).toHaveLength(50);
    });
  });

  it('stores any JSON value as JSONB and returns it unchanged', async () => {
    const values: unknown[] = [
      null,
      0,
      -12.5,
      'text with "quotes" and émoji 🎉',
      '',
      true,
      [],
      [1, 'two', null, { three: [3] }],
      {},
      { nested: { deeper: { list: [true, false] } }, 'key with spaces': 'ok' },
    ];
    for (const [index, claimValue] of values.entries()) {
      const res = await post('/v1/user-claims', { userId: 'json-user', claimKey: `v${index}`, claimValue });
      expect(res.status).toBe(200);
      expect(res.body.claimValue).toEqual(claimValue);
      expect((await get(`/user-claims/json-user/v${index}`)).body.claimValue).toEqual(claimValue);
    }
    const types = await app.dataSource.query(
      `SELECT claim_key, jsonb_typeof(claim_value) AS type FROM user_claims
        WHERE organization_id = $1 AND user_id = 'json-user' ORDER BY claim_key`,
      [orgA.id],
    );
    expect(types.map((row: { type: string }) => row.type)).toEqual([
      'null',
      'number',
      'number',
      'string',
      'string',
      'boolean',
      'array',
      'array',
      'object',
      'object',
    ]);
  });

  it('lists claims in byte order of their keys on every database', async () => {
    for (const claimKey of ['b', 'B', 'a', 'A', '0', '_']) {
      await post('/user-claims', { userId: 'sorted', claimKey, claimValue: claimKey });
    }
    const res = await get('/user-claims/sorted');
    expect(res.body.map((claim: { claimKey: string }) => claim.claimKey)).toEqual([
      '0',
      'A',
      'B',
      '_',
      'a',
      'b',
    ]);
  });

  it('keeps keys such as "constructor" in a value, and refuses "__proto__" and unknown fields by name', async () => {
    const claimValue = { constructor: { name: 'x' }, toString: 1, list: [{ constructor: null }] };
    const res = await post('/user-claims', { userId: 'keys', claimKey: 'odd', claimValue });
    expect(res.status).toBe(200);
    expect((await get('/user-claims/keys/odd')).body.claimValue).toEqual(claimValue);
    const proto = await post('/user-claims', {
      userId: 'keys',
      claimKey: 'proto',
      claimValue: JSON.parse('{"a":{"__proto__":{"polluted":true}}}'),
    });
    expect(proto.status).toBe(400);
    expect(proto.body.error.message).toContain('__proto__');
    const unknown = await post('/user-claims', {
      userId: 'keys',
      claimKey: 'extra',
      claimValue: 1,
      claimTtl: 5,
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('claimTtl'),
    });
    expect(await rows(`user_id = 'keys' AND claim_key <> 'odd'`)).toEqual([]);
  });

  it('accepts user ids with reserved URL characters when they are percent-encoded', async () => {
    const userId = 'ann@example.com/team #1';
    expect((await post('/user-claims', { userId, claimKey: 'k', claimValue: 1 })).status).toBe(200);
    const res = await get(`/user-claims/${encodeURIComponent(userId)}/k`);
    expect(res.status).toBe(200);
    expect(res.body.userId).toBe(userId);
    expect((await del(`/v1/user-claims/${encodeURIComponent(userId)}/k`)).status).toBe(204);
  });

  describe('limits', () => {
    it('accepts a value of exactly 64 KB serialized and refuses one byte more with 422', async () => {
      const exact = 'x'.repeat(64 * 1024 - 2); // the two quotes make 65,536 bytes
      const ok = await post('/user-claims', { userId: 'big', claimKey: 'exact', claimValue: exact });
      expect(ok.status).toBe(200);
      const over = await post('/user-claims', { userId: 'big', claimKey: 'over', claimValue: `${exact}x` });
      expect(over.status).toBe(422);
      expect(over.body).toEqual({
        error: { type: 'validation_error', code: 'claim_value_too_large', message: expect.any(String) },
      });
      expect(await rows(`user_id = 'big' AND claim_key = 'over'`)).toEqual([]);
    });

    it('measures the size in UTF-8 bytes of the serialized JSON', async () => {
      // "é" is one character but two bytes: 32,768 of them serialize to 65,538 bytes.
      const res = await post('/user-claims', {
        userId: 'big',
        claimKey: 'utf8',
        claimValue: 'é'.repeat(32_768),
      });
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('claim_value_too_large');
    });

    it('accepts JSON nested 256 levels deep and refuses deeper with 400', async () => {
      const nest = (levels: number) => JSON.parse('['.repeat(levels) + ']'.repeat(levels));
      const deep = await post('/user-claims', { userId: 'deep', claimKey: 'ok', claimValue: nest(256) });
      expect(deep.status).toBe(200);
      expect(deep.body.claimValue).toEqual(nest(256));
      const deeper = await post('/user-claims', { userId: 'deep', claimKey: 'no', claimValue: nest(257) });
      expect(deeper.status).toBe(400);
      expect(deeper.body.error).toMatchObject({
        code: 'invalid_request',
        message: expect.stringContaining('256'),
      });
    });

    it('refuses more than 50 claims in bulk with 422 bulk_limit_exceeded and writes none', async () => {
      const claims = Array.from({ length: 51 }, (_, i) => ({
        userId: 'bulk-51',
        claimKey: `k${i}`,
        claimValue: i,
      }));
      const res = await post('/v1/user-claims/bulk', { claims });
      expect(res.status).toBe(422);
      expect(res.body).toEqual({
        error: { type: 'validation_error', code: 'bulk_limit_exceeded', message: expect.any(String) },
      });
      expect(await rows(`user_id = 'bulk-51'`)).toEqual([]);
    });

    it('applies a bulk all-or-nothing: one bad claim leaves every stored value as it was', async () => {
      await post('/user-claims', { userId: 'atomic', claimKey: 'kept', claimValue: 'before' });
      const claims = [
        { userId: 'atomic', claimKey: 'kept', claimValue: 'after' },
        { userId: 'atomic', claimKey: 'new', claimValue: 1 },
        { userId: 'atomic', claimKey: 'huge', claimValue: 'x'.repeat(70_000) },
      ];
      const tooLarge = await post('/user-claims/bulk', { claims });
      expect(tooLarge.status).toBe(422);
      expect(tooLarge.body.error.code).toBe('claim_value_too_large');
      expect(tooLarge.body.error.message).toContain('claims[2].claimValue');
      const badKey = await post('/v1/user-claims/bulk', {
        claims: [claims[0], { userId: 'atomic', claimKey: 'bad key', claimValue: 1 }],
      });
      expect(badKey.status).toBe(400);
      expect(badKey.body.error.code).toBe('invalid_request');
      const missing = await post('/v1/user-claims/bulk', {
        claims: [claims[0], { userId: 'atomic', claimKey: 'x' }],
      });
      expect(missing.status).toBe(400);
      expect(missing.body.error).toMatchObject({
        code: 'missing_required_field',
        message: expect.stringContaining('claims[1].claimValue'),
      });
      expect(await claimsOf(orgA.id, 'atomic')).toEqual([
        { organization_id: orgA.id, user_id: 'atomic', claim_key: 'kept', claim_value: 'before' },
      ]);
    });

    it('validates the bulk wrapper', async () => {
      const missing = await post('/user-claims/bulk', {});
      expect(missing.status).toBe(400);
      expect(missing.body.error.code).toBe('missing_required_field');
      const notArray = await post('/user-claims/bulk', { claims: { userId: 'u' } });
      expect(notArray.status).toBe(400);
      expect(notArray.body.error.code).toBe('invalid_request');
      const duplicate = await post('/user-claims/bulk', {
        claims: [
          { userId: 'dup', claimKey: 'k', claimValue: 1 },
          { userId: 'dup', claimKey: 'k', claimValue: 2 },
        ],
      });
      expect(duplicate.status).toBe(400);
      expect(duplicate.body.error.message).toContain('claims[1]');
      expect(await rows(`user_id = 'dup'`)).toEqual([]);
      const empty = await post('/user-claims/bulk', { claims: [] });
      expect(empty.status).toBe(200);
      expect(empty.body).toEqual([]);
    });

    it.each([
      [{ claimKey: 'k', claimValue: 1 }, 'missing_required_field', 'userId'],
      [{ userId: 'u', claimValue: 1 }, 'missing_required_field', 'claimKey'],
      [{ userId: 'u', claimKey: 'k' }, 'missing_required_field', 'claimValue'],
      [{ userId: null, claimKey: 'k', claimValue: 1 }, 'missing_required_field', 'userId'],
      [{ userId: 42, claimKey: 'k', claimValue: 1 }, 'invalid_request', 'userId'],
      [{ userId: '', claimKey: 'k', claimValue: 1 }, 'invalid_request', 'userId'],
      [{ userId: 'u'.repeat(257), claimKey: 'k', claimValue: 1 }, 'invalid_request', 'userId'],
      [{ userId: 'u', claimKey: '', claimValue: 1 }, 'invalid_request', 'claimKey'],
      [{ userId: 'u', claimKey: 'k'.repeat(129), claimValue: 1 }, 'invalid_request', 'claimKey'],
      [{ userId: 'u', claimKey: 'has space', claimValue: 1 }, 'invalid_request', 'claimKey'],
      [{ userId: 'u', claimKey: 'slash/key', claimValue: 1 }, 'invalid_request', 'claimKey'],
      [{ userId: 'u', claimKey: 'ünïcode', claimValue: 1 }, 'invalid_request', 'claimKey'],
      [{ userId: 'u', claimKey: 'k', claimValue: 'nul \u0000 char' }, 'invalid_request', 'NUL'],
      [['not', 'an', 'object'], 'invalid_request', 'JSON object'],
      ['"a string"', 'invalid_request', 'JSON object'],
    ])('refuses %j with 400 %s', async (body, code, mention) => {
      const res = await post('/v1/user-claims', body);
      expect(res.status).toBe(400);
      expect(res.body.error).toEqual({
        type: 'invalid_request_error',
        code,
        message: expect.stringContaining(mention),
      });
      expect(await rows(`user_id = 'u'`)).toEqual([]);
    });

    it('accepts the longest user id and claim key, and every allowed key character', async () => {
      const userId = 'u'.repeat(256);
      const claimKey = `aZ09._-:${'k'.repeat(120)}`;
      const res = await post('/user-claims', { userId, claimKey, claimValue: 'edge' });
      expect(res.status).toBe(200);
      expect((await get(`/user-claims/${userId}/${claimKey}`)).body.claimValue).toBe('edge');
      await del(`/user-claims/${userId}/${claimKey}`);
    });

    it('refuses a malformed key in the path with 400 and an over-long user id in the path with 400', async () => {
      expect((await get('/user-claims/u/bad%20key')).body.error.code).toBe('invalid_request');
      expect((await del(`/user-claims/${'u'.repeat(257)}/k`)).status).toBe(400);
    });

    it('refuses a body that is not JSON with 400 invalid_request', async () => {
      const res = await post('/user-claims', '{"userId": ');
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    });
  });

  describe('access', () => {
    it('needs a key, and the user or full_access scope', async () => {
      const body = { userId: 'scoped', claimKey: 'k', claimValue: 1 };
      const anonymous = await call(app.baseUrl, 'POST', '/user-claims', { body });
      expect(anonymous.status).toBe(401);
      expect(anonymous.body.error.code).toBe('missing_api_key');
      for (const [method, path] of [
        ['POST', '/user-claims'],
        ['POST', '/v1/user-claims/bulk'],
        ['GET', '/user-claims/scoped'],
        ['GET', '/v1/user-claims/scoped/k'],
        ['DELETE', '/user-claims/scoped/k'],
      ]) {
        const res = await call(app.baseUrl, method, path, {
          key: orgA.keys.assistant,
          body: method === 'POST' ? body : undefined,
        });
        expect(res.status).toBe(403);
        expect(res.body.error.code).toBe('insufficient_scope');
      }
      expect(await rows(`user_id = 'scoped'`)).toEqual([]);
      expect((await post('/user-claims', body, orgA.keys.full_access)).status).toBe(200);
      expect((await get('/user-claims/scoped/k', orgA.keys.full_access)).body.claimValue).toBe(1);
    });
  });

  describe('tenant boundaries', () => {
    const owner = 'tenant-owner';

    beforeAll(async () => {
      await post('/user-claims', { userId: owner, claimKey: 'secret', claimValue: { ssn: 'A' } });
    });

    const ownerUntouched = async () =>
      expect(await claimsOf(orgA.id, owner)).toEqual([
        { organization_id: orgA.id, user_id: owner, claim_key: 'secret', claim_value: { ssn: 'A' } },
      ]);

    it.each(['/user-claims', '/v1/user-claims'])(
      '%s: another organization’s key sees nothing and changes nothing',
      async (base) => {
        const list = await get(`${base}/${owner}`, orgB.keys.user);
        expect(list.status).toBe(200);
        expect(list.body).toEqual([]);
        const one = await get(`${base}/${owner}/secret`, orgB.keys.full_access);
        expect(one.status).toBe(404);
        expect(one.body.error.code).toBe('claim_not_found');
        const deleted = await del(`${base}/${owner}/secret`, orgB.keys.user);
        expect(deleted.status).toBe(404);
        expect(deleted.body.error.code).toBe('claim_not_found');
        // Writing the same (userId, claimKey) lands in the writer's own organization.
        const written = await post(
          base,
          { userId: owner, claimKey: 'secret', claimValue: 'B' },
          orgB.keys.user,
        );
        expect(written.status).toBe(200);
        const bulk = await post(
          `${base}/bulk`,
          { claims: [{ userId: owner, claimKey: 'secret', claimValue: 'B2' }] },
          orgB.keys.user,
        );
        expect(bulk.status).toBe(200);
        await ownerUntouched();
        expect(await claimsOf(orgB.id, owner)).toEqual([
          { organization_id: orgB.id, user_id: owner, claim_key: 'secret', claim_value: 'B2' },
        ]);
        // And organization A still reads only its own value.
        expect((await get(`${base}/${owner}/secret`)).body.claimValue).toEqual({ ssn: 'A' });
        // Organization B erasing its own claim of the same pair leaves A's in place.
        expect((await del(`${base}/${owner}/secret`, orgB.keys.user)).status).toBe(204);
        await ownerUntouched();
      },
    );

    it('another user id of the same organization sees nothing and changes nothing', async () => {
      const list = await get('/user-claims/someone-else');
      expect(list.body).toEqual([]);
      expect((await get('/v1/user-claims/someone-else/secret')).status).toBe(404);
      expect((await del('/user-claims/someone-else/secret')).status).toBe(404);
      expect(
        (await post('/user-claims', { userId: 'someone-else', claimKey: 'secret', claimValue: 0 })).status,
      ).toBe(200);
      expect(
        (
          await post('/v1/user-claims/bulk', {
            claims: [{ userId: 'someone-else', claimKey: 'secret', claimValue: 1 }],
          })
        ).status,
      ).toBe(200);
      await ownerUntouched();
      expect(await claimsOf(orgA.id, 'someone-else')).toEqual([
        expect.objectContaining({ claim_key: 'secret', claim_value: 1 }),
      ]);
    });

    it('takes the organization from the key, never from the body', async () => {
      const res = await post(
        '/user-claims',
        { userId: 'org-smuggler', claimKey: 'k', claimValue: 1, organizationId: orgA.id },
        orgB.keys.user,
      );
      expect(res.status).toBe(200);
      expect(res.body).not.toHaveProperty('organizationId');
      expect(await rows(`user_id = 'org-smuggler'`)).toEqual([
        expect.objectContaining({ organization_id: orgB.id }),
      ]);
    });
  });

  it('keeps one row when many writers upsert the same claim at once', async () => {
    const writes = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        post('/user-claims', { userId: 'racer', claimKey: 'same', claimValue: i }),
      ),
    );
    expect(writes.map((res) => res.status)).toEqual(Array(12).fill(200));
    const stored = await claimsOf(orgA.id, 'racer');
    expect(stored).toHaveLength(1);
    expect(writes.map((res) => res.body.claimValue)).toContain(stored[0].claim_value);
  });

  it('erases every claim of one user of one organization inside a transaction', async () => {
    await post('/user-claims/bulk', {
      claims: [
        { userId: 'erase-me', claimKey: 'a', claimValue: 1 },
        { userId: 'erase-me', claimKey: 'b', claimValue: 2 },
      ],
    });
    await post('/user-claims', { userId: 'erase-me', claimKey: 'a', claimValue: 'B' }, orgB.keys.user);
    await post('/user-claims', { userId: 'keep-me', claimKey: 'a', claimValue: 1 });
    const repository = app.running.app.get(ClaimsRepository);
    const erased = await app.dataSource.transaction((manager) =>
      repository.eraseUserContext(manager, orgA.id, 'erase-me'),
    );
    expect(erased).toBe(2);
    expect(await claimsOf(orgA.id, 'erase-me')).toEqual([]);
    expect(await claimsOf(orgB.id, 'erase-me')).toHaveLength(1);
    expect(await claimsOf(orgA.id, 'keep-me')).toHaveLength(1);
  });
});
