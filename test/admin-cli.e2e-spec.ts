import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { call } from './support/http.js';
import { runAdmin } from '../src/admin/admin.runner.js';
import { adminCli } from './support/admin-cli.js';
import { startTestApp, type TestApp } from './support/test-app.js';

describe('admin command-line tool', () => {
  let app: TestApp;
  let workDir: string;

  const { admin, ok, fails } = adminCli(() => ({ ...app.database.env, INIT_CWD: workDir }));

  /** What a client sees for this key on a route that needs scope `assistant`. */
  async function asClient(key: string) {
    return call(app.baseUrl, 'POST', '/v1/responses', { key, body: {} });
  }

  async function rows(sql: string, parameters: unknown[] = []): Promise<any[]> {
    return app.dataSource.query(sql, parameters);
  }

  async function writeWorkFile(name: string, content: string): Promise<string> {
    await writeFile(join(workDir, name), content);
    return name;
  }

  beforeAll(async () => {
    app = await startTestApp({ API_KEY_CACHE_TTL_SECONDS: '1' });
    workDir = await mkdtemp(join(tmpdir(), 'switchboard-admin-'));
  });
  afterAll(async () => {
    await app?.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  describe('orgs', () => {
    it('creates, lists and sets the rate limit of organizations', async () => {
      const created = await ok(
        'orgs',
        'create',
        '--slug',
        'orgs-one',
        '--name',
        'Orgs One',
        '--rate-limit',
        '600',
      );
      expect(created).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        slug: 'orgs-one',
        name: 'Orgs One',
        rateLimitPerMinute: 600,
        monthlyTokenBudget: null,
        secretEnvGrants: [],
        ssrfAllowlist: [],
        createdAt: expect.any(String),
      });
      const defaults = await ok('orgs', 'create', '--slug', 'orgs-two');
      expect(defaults).toMatchObject({ slug: 'orgs-two', name: 'orgs-two', rateLimitPerMinute: null });

      const listed = await ok('orgs', 'list');
      expect(listed).toEqual(expect.arrayContaining([created, defaults]));

      expect(await ok('orgs', 'set-rate-limit', 'orgs-two', '120')).toMatchObject({
        rateLimitPerMinute: 120,
      });
      expect(await ok('orgs', 'set-rate-limit', created.id, 'default')).toMatchObject({
        slug: 'orgs-one',
        rateLimitPerMinute: null,
      });
      expect(await ok('orgs', 'set-token-budget', 'orgs-two', '1000000')).toMatchObject({
        monthlyTokenBudget: 1_000_000,
      });
      expect(await fails('orgs', 'set-token-budget', 'orgs-two', '0')).toContain('token budget');
      // Platform-only grants: environment secrets its admin may name, hosts its configuration may reach.
      expect(await ok('orgs', 'grant-secrets', 'orgs-two', 'TWO_LLM_KEY,TWO_TOOL_KEY')).toMatchObject({
        secretEnvGrants: ['TWO_LLM_KEY', 'TWO_TOOL_KEY'],
      });
      expect(await fails('orgs', 'grant-secrets', 'orgs-two', 'REDIS_URL')).toContain("service's own");
      expect(
        await ok('orgs', 'set-ssrf-allowlist', 'orgs-two', '10.0.0.0/8,llm.internal:8000'),
      ).toMatchObject({
        ssrfAllowlist: ['10.0.0.0/8', 'llm.internal:8000'],
      });
      expect(await fails('orgs', 'set-ssrf-allowlist', 'orgs-two', 'not a host')).toContain('ssrfAllowlist');
      expect(await ok('orgs', 'grant-secrets', 'orgs-two', 'none')).toMatchObject({ secretEnvGrants: [] });
      expect(await ok('orgs', 'set-token-budget', 'orgs-one', 'none')).toMatchObject({
        monthlyTokenBudget: null,
      });
      expect(
        await rows(
          'SELECT slug, monthly_token_budget::int AS budget FROM organizations WHERE slug LIKE $1 ORDER BY slug',
          ['orgs-%'],
        ),
      ).toEqual([
        { slug: 'orgs-one', budget: null },
        { slug: 'orgs-two', budget: 1_000_000 },
      ]);
      expect(
        await rows('SELECT slug, rate_limit_per_minute FROM organizations WHERE slug LIKE $1 ORDER BY slug', [
          'orgs-%',
        ]),
      ).toEqual([
        { slug: 'orgs-one', rate_limit_per_minute: null },
        { slug: 'orgs-two', rate_limit_per_minute: 120 },
      ]);
    });

    it('prints a readable table without --json', async () => {
      const run = await admin('orgs', 'list');
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^SLUG\s+ID\s+NAME\s+RATE LIMIT\s+TOKEN BUDGET\s+CREATED\n/);
      expect(run.stdout).toMatch(/orgs-two .* 120\/min/);
    });

    it('refuses duplicates, bad slugs and bad limits with exit code 1 and no change', async () => {
      expect(await fails('orgs', 'create', '--slug', 'orgs-one')).toContain('already exists');
      expect(await fails('orgs', 'create', '--slug', 'Not A Slug')).toContain('slug');
      expect(await fails('orgs', 'set-rate-limit', 'orgs-two', '0')).toContain('rate limit');
      expect(await fails('orgs', 'set-rate-limit', 'orgs-two', 'lots')).toContain('whole number');
      expect(await fails('orgs', 'set-rate-limit', 'no-such-org', '10')).toContain('"no-such-org" not found');
      expect(
        await rows('SELECT rate_limit_per_minute FROM organizations WHERE slug = $1', ['orgs-two']),
      ).toEqual([{ rate_limit_per_minute: 120 }]);
    });

    it('reports errors as JSON on stderr with --json', async () => {
      const run = await admin('orgs', 'create', '--slug', 'orgs-one', '--json');
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(JSON.parse(run.stderr)).toEqual({
        error: { message: 'organization "orgs-one" already exists' },
      });
    });
  });

  describe('keys', () => {
    let orgId: string;

    beforeAll(async () => {
      orgId = (await ok('orgs', 'create', '--slug', 'keys-org')).id;
      await ok('orgs', 'create', '--slug', 'keys-other');
    });

    it('creates a key whose secret is shown once and authenticates against the running service', async () => {
      const created = await ok(
        'keys',
        'create',
        '--org',
        'keys-org',
        '--name',
        'ci',
        '--scopes',
        'assistant,user',
      );
      expect(created).toEqual({
        id: expect.any(String),
        organizationId: orgId,
        name: 'ci',
        hint: `swb_…${created.secret.slice(-4)}`,
        scopes: ['assistant', 'user'],
        legacy: false,
        createdAt: expect.any(String),
        lastUsedAt: null,
        revokedAt: null,
        secret: expect.stringMatching(/^swb_[0-9A-Za-z]{40,}$/),
      });
      const reply = await asClient(created.secret);
      expect(reply.status).toBe(400);
      expect(reply.body.error.code).toBe('missing_required_field');

      const [row] = await rows('SELECT key_hash FROM api_keys WHERE id = $1', [created.id]);
      expect(row.key_hash).toBe(createHash('sha256').update(created.secret).digest('hex'));
    });

    it('lists keys without their secret or hash', async () => {
      const created = await ok('keys', 'create', '--org', 'keys-org', '--name', 'listed', '--scopes', 'user');
      const run = await admin('keys', 'list', '--org', 'keys-org', '--json');
      expect(run.code).toBe(0);
      const listed = run.json.find((k: { id: string }) => k.id === created.id);
      const { secret, ...withoutSecret } = created;
      expect(listed).toEqual(withoutSecret);
      const [{ key_hash: hash }] = await rows('SELECT key_hash FROM api_keys WHERE id = $1', [created.id]);
      expect(run.stdout).not.toContain(secret);
      expect(run.stdout).not.toContain(hash);
      for (const key of run.json) expect(Object.keys(key).sort()).toEqual(Object.keys(withoutSecret).sort());

      const text = await admin('keys', 'list', '--org', 'keys-org');
      expect(text.stdout).toMatch(/^ID\s+NAME\s+HINT\s+SCOPES\s+LEGACY\s+CREATED\s+LAST USED\s+REVOKED\n/);
      expect(text.stdout).not.toContain(secret);
    });

    it('revokes a key: the running service refuses it within the cache TTL', async () => {
      const created = await ok(
        'keys',
        'create',
        '--org',
        'keys-org',
        '--name',
        'to-revoke',
        '--scopes',
        'assistant',
      );
      // Seen once, so the running service has it cached when it is revoked.
      expect((await asClient(created.secret)).status).toBe(400);

      const revoked = await ok('keys', 'revoke', '--org', 'keys-org', created.id);
      expect(revoked).toMatchObject({ id: created.id, revokedAt: expect.any(String) });
      expect(revoked).not.toHaveProperty('secret');

      // API_KEY_CACHE_TTL_SECONDS=1 for this app: refused within about a second.
      const deadline = Date.now() + 5000;
      let reply = await asClient(created.secret);
      while (reply.status !== 401 && Date.now() < deadline) {
        await new Promise((done) => setTimeout(done, 200));
        reply = await asClient(created.secret);
      }
      expect(reply.status).toBe(401);
      expect(reply.body).toEqual({
        error: { type: 'authentication_error', code: 'invalid_api_key', message: expect.any(String) },
      });
      const listed = await ok('keys', 'list', '--org', 'keys-org');
      expect(listed.find((k: { id: string }) => k.id === created.id).revokedAt).toBe(revoked.revokedAt);

      expect(await fails('keys', 'revoke', '--org', 'keys-org', created.id)).toContain('no active key');
    });

    it("cannot see or revoke another organization's key", async () => {
      const created = await ok(
        'keys',
        'create',
        '--org',
        'keys-org',
        '--name',
        'mine',
        '--scopes',
        'assistant',
      );
      expect(await fails('keys', 'revoke', '--org', 'keys-other', created.id)).toContain('no active key');
      expect(await ok('keys', 'list', '--org', 'keys-other')).toEqual([]);
      expect(await rows('SELECT revoked_at FROM api_keys WHERE id = $1', [created.id])).toEqual([
        { revoked_at: null },
      ]);
      expect((await asClient(created.secret)).status).toBe(400);
    });

    it('imports a legacy key by its SHA-256; the legacy key then authenticates', async () => {
      const legacyKey = 'ab'.repeat(32);
      const sha256 = createHash('sha256').update(legacyKey).digest('hex');
      const imported = await ok(
        'keys',
        'import-legacy',
        '--org',
        'keys-org',
        '--name',
        'old portal',
        '--sha256',
        sha256.toUpperCase(),
        '--scopes',
        'assistant',
      );
      expect(imported).toMatchObject({
        name: 'old portal',
        legacy: true,
        scopes: ['assistant'],
        revokedAt: null,
      });
      expect(imported).not.toHaveProperty('secret');
      expect((await asClient(legacyKey)).body.error.code).toBe('missing_required_field');
      const viaBearer = await call(app.baseUrl, 'POST', '/v1/responses', {
        headers: { authorization: `Bearer ${legacyKey}` },
        body: {},
      });
      expect(viaBearer.body.error.code).toBe('missing_required_field');

      expect(
        await fails(
          'keys',
          'import-legacy',
          '--org',
          'keys-org',
          '--name',
          'again',
          '--sha256',
          sha256,
          '--scopes',
          'user',
        ),
      ).toContain('already exists');
      expect(
        await fails(
          'keys',
          'import-legacy',
          '--org',
          'keys-org',
          '--name',
          'x',
          '--sha256',
          'abc',
          '--scopes',
          'user',
        ),
      ).toContain('64 hexadecimal');
    });

    it('validates scopes, the organization and the key id', async () => {
      expect(await fails('keys', 'create', '--org', 'keys-org', '--name', 'x', '--scopes', 'root')).toContain(
        'unknown scope "root"',
      );
      // `admin` (the admin HTTP API) is a scope like the others.
      const adminKey = await ok('keys', 'create', '--org', 'keys-org', '--name', 'ops', '--scopes', 'admin');
      expect(adminKey.scopes).toEqual(['admin']);
      expect(await fails('keys', 'create', '--org', 'nobody', '--name', 'x', '--scopes', 'user')).toContain(
        'not found',
      );
      expect(await fails('keys', 'create', '--org', 'keys-org', '--name', 'x')).toContain('missing --scopes');
      expect(await fails('keys', 'revoke', '--org', 'keys-org', 'not-an-id')).toContain('must be a UUID');
    });
  });

  describe('assistants', () => {
    beforeAll(async () => {
      await ok('orgs', 'create', '--slug', 'asst-org');
      await ok('orgs', 'create', '--slug', 'asst-other');
    });

    it('creates an assistant on an OpenAI-compatible upstream from flags, and shows it', async () => {
      const instructionsFile = await writeWorkFile(
        'instructions.txt',
        'You answer questions about invoices.',
      );
      const created = await ok(
        'assistants',
        'create',
        '--org',
        'asst-org',
        '--name',
        'Billing',
        '--instructions-file',
        instructionsFile,
        '--base-url',
        'https://llm.example.com/v1/',
        '--model',
        'gpt-4o-mini',
        '--api-key-env',
        'BILLING_LLM_KEY',
        '--function-calling',
        'false',
        '--timeout-seconds',
        '30',
      );
      expect(created).toEqual({
        id: expect.any(String),
        organizationId: expect.any(String),
        name: 'Billing',
        instructions: 'You answer questions about invoices.',
        model: {
          provider: 'openai-compatible',
          baseUrl: 'https://llm.example.com/v1',
          model: 'gpt-4o-mini',
          apiKeyEnv: 'BILLING_LLM_KEY',
          functionCalling: false,
          timeoutSeconds: 30,
        },
        tools: [],
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      expect(await ok('assistants', 'show', '--org', 'asst-org', created.id)).toEqual(created);
      expect(await ok('assistants', 'show', '--org', 'asst-org', `asst_${created.id}`)).toEqual(created);
      expect(await ok('assistants', 'list', '--org', 'asst-org')).toEqual([created]);

      const text = await admin('assistants', 'show', '--org', 'asst-org', created.id);
      expect(text.stdout).toContain('gpt-4o-mini at https://llm.example.com/v1 (key in BILLING_LLM_KEY)');
    });

    it('creates an assistant on the offline model by default', async () => {
      const created = await ok(
        'assistants',
        'create',
        '--org',
        'asst-org',
        '--name',
        'Offline',
        '--instructions',
        'Hi',
      );
      expect(created.model).toEqual({ provider: 'offline', functionCalling: true, script: [] });
    });

    it('updates name, instructions and model settings, keeping what the flags do not mention', async () => {
      const created = await ok(
        'assistants',
        'create',
        '--org',
        'asst-org',
        '--name',
        'Editable',
        '--base-url',
        'http://127.0.0.1:9/v1',
        '--model',
        'm1',
      );
      const renamed = await ok(
        'assistants',
        'update',
        '--org',
        'asst-org',
        created.id,
        '--name',
        'Edited',
        '--model',
        'm2',
        '--function-calling',
        'false',
      );
      expect(renamed).toMatchObject({
        name: 'Edited',
        instructions: '',
        model: {
          provider: 'openai-compatible',
          baseUrl: 'http://127.0.0.1:9/v1',
          model: 'm2',
          functionCalling: false,
        },
      });
      const modelFile = await writeWorkFile(
        'model.yaml',
        'provider: offline\nscript:\n  - match: "^ping"\n    reply: pong\n',
      );
      const offline = await ok(
        'assistants',
        'update',
        '--org',
        'asst-org',
        created.id,
        '--model-file',
        modelFile,
        '--instructions',
        'Be terse.',
      );
      expect(offline).toMatchObject({
        name: 'Edited',
        instructions: 'Be terse.',
        model: { provider: 'offline', functionCalling: true, script: [{ match: '^ping', reply: 'pong' }] },
      });
      const viaJson = await ok(
        'assistants',
        'update',
        '--org',
        'asst-org',
        created.id,
        '--model-json',
        '{"provider":"openai-compatible","baseUrl":"https://api.example.org/v1","model":"big","functionCalling":true}',
      );
      expect(viaJson.model).toEqual({
        provider: 'openai-compatible',
        baseUrl: 'https://api.example.org/v1',
        model: 'big',
        functionCalling: true,
      });
      const [row] = await rows('SELECT name, instructions, model FROM assistants WHERE id = $1', [
        created.id,
      ]);
      expect(row).toEqual({ name: 'Edited', instructions: 'Be terse.', model: viaJson.model });
    });

    it('refuses invalid settings and changes nothing', async () => {
      const created = await ok('assistants', 'create', '--org', 'asst-org', '--name', 'Stable');
      expect(
        await fails(
          'assistants',
          'update',
          '--org',
          'asst-org',
          created.id,
          '--provider',
          'openai-compatible',
          '--model',
          'x',
        ),
      ).toContain('model.baseUrl is required');
      expect(
        await fails(
          'assistants',
          'update',
          '--org',
          'asst-org',
          created.id,
          '--base-url',
          'ftp://x',
          '--model',
          'x',
        ),
      ).toContain('http or https');
      expect(
        await fails('assistants', 'update', '--org', 'asst-org', created.id, '--model-json', '{nope'),
      ).toContain('not valid JSON');
      expect(
        await fails(
          'assistants',
          'update',
          '--org',
          'asst-org',
          created.id,
          '--model-json',
          '{}',
          '--model',
          'x',
        ),
      ).toContain('do not combine');
      expect(
        await fails(
          'assistants',
          'update',
          '--org',
          'asst-org',
          created.id,
          '--instructions',
          'a',
          '--instructions-file',
          'b',
        ),
      ).toContain('only one of');
      expect(
        await fails(
          'assistants',
          'create',
          '--org',
          'asst-org',
          '--name',
          'X',
          '--instructions-file',
          'missing.txt',
        ),
      ).toContain('no such file');
      expect(await ok('assistants', 'show', '--org', 'asst-org', created.id)).toEqual(created);
    });

    it("does not show or update another organization's assistant", async () => {
      const created = await ok('assistants', 'create', '--org', 'asst-org', '--name', 'Private');
      expect(await fails('assistants', 'show', '--org', 'asst-other', created.id)).toContain(
        'has no assistant',
      );
      expect(
        await fails('assistants', 'update', '--org', 'asst-other', created.id, '--name', 'Stolen'),
      ).toContain('has no assistant');
      expect(await ok('assistants', 'list', '--org', 'asst-other')).toEqual([]);
      expect((await ok('assistants', 'show', '--org', 'asst-org', created.id)).name).toBe('Private');
    });
  });

  describe('apply', () => {
    const declaration = (billingInstructions: string) =>
      [
        'organizations:',
        '  - slug: apply-acme',
        '    name: Acme Corp',
        '    rateLimitPerMinute: 300',
        '    monthlyTokenBudget: 5000000',
        '    assistants:',
        '      - name: Billing',
        `        instructions: ${JSON.stringify(billingInstructions)}`,
        '        model:',
        '          provider: openai-compatible',
        '          baseUrl: https://llm.example.com/v1',
        '          model: gpt-4o-mini',
        '          apiKeyEnv: ACME_LLM_KEY',
        '          functionCalling: true',
        '      - name: Concierge',
        '        model: { provider: offline }',
        '  - slug: apply-globex',
        '    assistants:',
        '      - name: Helper',
        '',
      ].join('\n');

    async function snapshot() {
      return {
        organizations: await rows(
          "SELECT id, slug, name, rate_limit_per_minute, monthly_token_budget::int AS budget FROM organizations WHERE slug LIKE 'apply-%' ORDER BY slug",
        ),
        assistants: await rows(
          `SELECT a.id, o.slug, a.name, a.instructions, a.model, a.updated_at FROM assistants a
             JOIN organizations o ON o.id = a.organization_id WHERE o.slug LIKE 'apply-%' ORDER BY o.slug, a.name`,
        ),
      };
    }

    it('creates what the file declares, then finds it unchanged the second time (no duplicates)', async () => {
      const file = await writeWorkFile('switchboard.yaml', declaration('Help with invoices.'));
      const first = await ok('apply', '-f', file);
      expect(first.summary).toEqual({ created: 5, updated: 0, unchanged: 0 });
      expect(first.changes.map((c: any) => `${c.kind} ${c.key} ${c.action}`)).toEqual([
        'organization apply-acme created',
        'organization apply-globex created',
        'assistant apply-acme/Billing created',
        'assistant apply-acme/Concierge created',
        'assistant apply-globex/Helper created',
      ]);
      const afterFirst = await snapshot();
      expect(afterFirst.organizations).toEqual([
        {
          id: expect.any(String),
          slug: 'apply-acme',
          name: 'Acme Corp',
          rate_limit_per_minute: 300,
          budget: 5_000_000,
        },
        {
          id: expect.any(String),
          slug: 'apply-globex',
          name: 'apply-globex',
          rate_limit_per_minute: null,
          budget: null,
        },
      ]);
      expect(afterFirst.assistants).toHaveLength(3);
      expect(afterFirst.assistants[0]).toMatchObject({
        name: 'Billing',
        instructions: 'Help with invoices.',
        model: { provider: 'openai-compatible', apiKeyEnv: 'ACME_LLM_KEY', model: 'gpt-4o-mini' },
      });

      const second = await ok('apply', '--file', file);
      expect(second.summary).toEqual({ created: 0, updated: 0, unchanged: 5 });
      expect(second.changes.map((c: any) => c.id)).toEqual(first.changes.map((c: any) => c.id));
      expect(await snapshot()).toEqual(afterFirst);

      const text = await admin('apply', '-f', file);
      expect(text.stdout).toContain('0 created, 0 updated, 5 unchanged.');
    });

    it('updates only what changed', async () => {
      const before = await snapshot();
      const file = await writeWorkFile('switchboard.yaml', declaration('Help with invoices and refunds.'));
      const report = await ok('apply', '-f', file);
      expect(report.summary).toEqual({ created: 0, updated: 1, unchanged: 4 });
      expect(report.changes.find((c: any) => c.action === 'updated')).toMatchObject({
        kind: 'assistant',
        key: 'apply-acme/Billing',
      });
      const after = await snapshot();
      expect(after.organizations).toEqual(before.organizations);
      expect(after.assistants[0].instructions).toBe('Help with invoices and refunds.');
      expect(after.assistants.slice(1)).toEqual(before.assistants.slice(1));
    });

    it('changes nothing when the file fails part-way (one transaction)', async () => {
      const before = await snapshot();
      const file = await writeWorkFile(
        'bad.yaml',
        [
          'organizations:',
          '  - slug: apply-acme',
          '    rateLimitPerMinute: 999',
          '  - slug: apply-new',
          '    assistants:',
          '      - name: Fine',
          '  - slug: apply-globex',
          '    assistants:',
          '      - name: Broken',
          '        model: { provider: openai-compatible, model: m }',
          '',
        ].join('\n'),
      );
      const message = await fails('apply', '-f', file);
      expect(message).toContain('organizations[2].assistants[0]: model.baseUrl is required');
      expect(await snapshot()).toEqual(before);
    });

    it('refuses unknown keys, duplicates and malformed files, changing nothing', async () => {
      const before = await snapshot();
      const typo = await writeWorkFile(
        'typo.yaml',
        'organizations:\n  - slug: apply-acme\n    rateLimit: 5\n',
      );
      expect(await fails('apply', '-f', typo)).toContain('unknown key: organizations[0].rateLimit');
      const twice = await writeWorkFile(
        'twice.json',
        JSON.stringify({ organizations: [{ slug: 'apply-x', assistants: [{ name: 'A' }, { name: 'A' }] }] }),
      );
      expect(await fails('apply', '-f', twice)).toContain(
        'organizations[0].assistants[1].name "A" is already declared',
      );
      const broken = await writeWorkFile('broken.json', '{"organizations": [');
      expect(await fails('apply', '-f', broken)).toContain('could not be parsed');
      expect(await fails('apply', '-f', 'nowhere.yaml')).toContain('no such file');
      expect(await snapshot()).toEqual(before);
    });

    it('reports without changing anything on --dry-run', async () => {
      const before = await snapshot();
      const file = await writeWorkFile(
        'dry.yaml',
        'organizations:\n  - slug: apply-dry\n    assistants:\n      - name: Maybe\n',
      );
      const report = await ok('apply', '-f', file, '--dry-run');
      expect(report).toMatchObject({ dryRun: true, summary: { created: 2, updated: 0, unchanged: 0 } });
      expect(await snapshot()).toEqual(before);
    });

    it('applies the example committed in examples/switchboard.yaml', async () => {
      const example = resolve('examples/switchboard.yaml');
      const first = await ok('apply', '-f', example);
      expect(first.summary.created).toBeGreaterThan(0);
      expect((await ok('apply', '-f', example)).summary).toEqual({
        created: 0,
        updated: 0,
        unchanged: first.changes.length,
      });
    });
  });

  describe('usage and configuration', () => {
    it('prints help with exit code 0 without touching a database', async () => {
      let stdout = '';
      const code = await runAdmin(
        ['help'],
        { stdout: { write: (s) => (stdout += s) }, stderr: { write: () => true } },
        {
          DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
        },
      );
      expect(code).toBe(0);
      expect(stdout).toContain('keys revoke');
      const commandHelp = await admin('keys', 'create', '--help');
      expect(commandHelp.code).toBe(0);
      expect(commandHelp.stdout).toContain('--scopes');
    });

    it('rejects unknown commands and options', async () => {
      expect(await fails('orgs', 'delete')).toContain('unknown command');
      expect(await fails('orgs', 'create', '--slugg', 'x')).toContain("Unknown option '--slugg'");
      expect(await fails('orgs', 'set-rate-limit', 'x')).toContain('expected 2 arguments');
    });

    it('reports a database it cannot reach as an error, not a stack', async () => {
      let stderr = '';
      const code = await runAdmin(
        ['orgs', 'list'],
        { stdout: { write: () => true }, stderr: { write: (s) => (stderr += s) } },
        { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' },
      );
      expect(code).toBe(1);
      expect(stderr).toMatch(/^error: cannot connect to the database: .*ECONNREFUSED/);
      expect(stderr).not.toMatch(/\n\s+at /);
    });

    it('stops on an invalid configuration value, naming the variable', async () => {
      let stderr = '';
      const code = await runAdmin(
        ['orgs', 'list'],
        { stdout: { write: () => true }, stderr: { write: (s) => (stderr += s) } },
        {
          ...app.database.env,
          API_KEY_CACHE_TTL_SECONDS: 'soon',
        },
      );
      expect(code).toBe(1);
      expect(stderr).toContain('API_KEY_CACHE_TTL_SECONDS');
    });
  });
});
