import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeUpstream } from './support/fake-upstream.js';
import { call } from './support/http.js';
import { adminCli } from './support/admin-cli.js';
import { startTestApp, type TestApp } from './support/test-app.js';

describe('admin CLI and apply: specialists and the tools of assistants', () => {
  let app: TestApp;
  let upstream: FakeUpstream;
  let workDir: string;

  const { admin, ok, fails } = adminCli(() => ({ ...app.database.env, INIT_CWD: workDir }));

  async function rows(sql: string, parameters: unknown[] = []): Promise<any[]> {
    return app.dataSource.query(sql, parameters);
  }

  async function writeWorkFile(name: string, content: string): Promise<string> {
    await writeFile(join(workDir, name), content);
    return name;
  }

  /** Every specialist of an organization, as stored. */
  async function specialistRows(slug: string): Promise<any[]> {
    return rows(
      `SELECT s.id, a.name AS assistant, s.name, s.role, s.instructions, s.model, s.tool_names, s.updated_at
         FROM specialists s JOIN assistants a ON a.id = s.assistant_id
         JOIN organizations o ON o.id = s.organization_id
        WHERE o.slug = $1 ORDER BY a.name, s.name`,
      [slug],
    );
  }

  beforeAll(async () => {
    upstream = await new FakeUpstream().start();
    app = await startTestApp({ SSRF_ALLOWLIST: '127.0.0.1', UPSTREAM_MAX_RETRIES: '0' });
    workDir = await mkdtemp(join(tmpdir(), 'switchboard-admin-specialists-'));
    await ok('orgs', 'create', '--slug', 'spec-org');
    await ok('orgs', 'create', '--slug', 'spec-other');
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.stop();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  describe('assistants --tools', () => {
    it('sets, shows, keeps and clears the server-side tools of the generic path', async () => {
      const created = await ok(
        'assistants',
        'create',
        '--org',
        'spec-org',
        '--name',
        'Tooled',
        '--tools',
        'web_search, crm_lookup,web_search',
      );
      expect(created.tools).toEqual(['web_search', 'crm_lookup']);
      expect(await ok('assistants', 'show', '--org', 'spec-org', created.id)).toEqual(created);
      expect(await ok('assistants', 'list', '--org', 'spec-org')).toEqual(expect.arrayContaining([created]));
      const shown = await admin('assistants', 'show', '--org', 'spec-org', created.id);
      expect(shown.stdout).toContain('tools:            web_search, crm_lookup');
      const listed = await admin('assistants', 'list', '--org', 'spec-org');
      expect(listed.stdout).toMatch(/^ID\s+NAME\s+PROVIDER\s+MODEL\s+TOOLS\s+UPDATED\n/);
      expect(listed.stdout).toMatch(/Tooled\s+offline\s+-\s+web_search,crm_lookup/);

      // Flags that do not mention tools keep them; --tools replaces the list; "" clears it.
      const renamed = await ok('assistants', 'update', '--org', 'spec-org', created.id, '--name', 'Tooled 2');
      expect(renamed.tools).toEqual(['web_search', 'crm_lookup']);
      const replaced = await ok('assistants', 'update', '--org', 'spec-org', created.id, '--tools', 'docs');
      expect(replaced.tools).toEqual(['docs']);
      const cleared = await ok('assistants', 'update', '--org', 'spec-org', created.id, '--tools', '');
      expect(cleared.tools).toEqual([]);
      expect(await rows('SELECT tool_names FROM assistants WHERE id = $1', [created.id])).toEqual([
        { tool_names: [] },
      ]);

      expect(
        await fails('assistants', 'update', '--org', 'spec-org', created.id, '--tools', 'no spaces allowed'),
      ).toContain('tools must be a list of tool names');
      expect((await ok('assistants', 'show', '--org', 'spec-org', created.id)).tools).toEqual([]);
    });
  });

  describe('specialists', () => {
    let support: any;

    beforeAll(async () => {
      support = await ok(
        'assistants',
        'create',
        '--org',
        'spec-org',
        '--name',
        'Support',
        '--base-url',
        'https://llm.example.com/v1',
        '--model',
        'gpt-4o-mini',
        '--api-key-env',
        'SUPPORT_LLM_KEY',
      );
    });

    it('creates with set (on the assistant model by default), lists, and updates what the flags say', async () => {
      const created = await ok(
        'specialists',
        'set',
        '--org',
        'spec-org',
        '--assistant',
        'Support',
        '--name',
        'billing',
        '--role',
        'Questions about invoices and refunds',
        '--instructions',
        'You are the billing specialist.',
        '--tools',
        'web_search,crm_lookup',
      );
      expect(created).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        organizationId: support.organizationId,
        assistantId: support.id,
        name: 'billing',
        role: 'Questions about invoices and refunds',
        instructions: 'You are the billing specialist.',
        model: null,
        tools: ['web_search', 'crm_lookup'],
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        action: 'created',
      });
      const { action: _action, ...view } = created;
      expect(await ok('specialists', 'list', '--org', 'spec-org', '--assistant', support.id)).toEqual([view]);

      // The assistant by its id with the API's prefix; a model flag starts from the assistant's model.
      const ownModel = await ok(
        'specialists',
        'set',
        '--org',
        'spec-org',
        '--assistant',
        `asst_${support.id}`,
        '--name',
        'billing',
        '--model',
        'gpt-4o',
      );
      expect(ownModel).toMatchObject({
        id: created.id,
        action: 'updated',
        role: created.role,
        instructions: created.instructions,
        tools: created.tools,
        model: { ...support.model, model: 'gpt-4o' },
      });

      // The same again writes nothing (a model read back from JSONB still compares equal).
      const again = await ok(
        'specialists',
        'set',
        '--org',
        'spec-org',
        '--assistant',
        'Support',
        '--name',
        'billing',
        '--model',
        'gpt-4o',
      );
      expect(again).toEqual({ ...ownModel, action: 'unchanged' });

      const instructionsFile = await writeWorkFile('billing.md', 'Check the invoice number first.');
      const offline = await ok(
        'specialists',
        'set',
        '--org',
        'spec-org',
        '--assistant',
        'Support',
        '--name',
        'billing',
        '--instructions-file',
        instructionsFile,
        '--model-json',
        '{"provider":"offline","script":[{"match":"hi","reply":"hello"}]}',
        '--tools',
        '',
      );
      expect(offline).toMatchObject({
        action: 'updated',
        instructions: 'Check the invoice number first.',
        model: { provider: 'offline', functionCalling: true, script: [{ match: 'hi', reply: 'hello' }] },
        tools: [],
      });
      const inherited = await ok(
        'specialists',
        'set',
        '--org',
        'spec-org',
        '--assistant',
        'Support',
        '--name',
        'billing',
        '--inherit-model',
      );
      expect(inherited).toMatchObject({ action: 'updated', model: null });

      expect(await specialistRows('spec-org')).toEqual([
        {
          id: created.id,
          assistant: 'Support',
          name: 'billing',
          role: 'Questions about invoices and refunds',
          instructions: 'Check the invoice number first.',
          model: null,
          tool_names: [],
          updated_at: expect.any(Date),
        },
      ]);

      const text = await admin('specialists', 'list', '--org', 'spec-org', '--assistant', 'Support');
      expect(text.code).toBe(0);
      expect(text.stdout).toMatch(/^NAME\s+ROLE\s+MODEL\s+TOOLS\s+UPDATED\n/);
      expect(text.stdout).toMatch(/billing\s+Questions about invoices and refunds\s+assistant's\s+-/);
    });

    it('deletes a specialist', async () => {
      const created = await ok(
        'specialists',
        'set',
        '--org',
        'spec-org',
        '--assistant',
        'Support',
        '--name',
        'returns',
        '--role',
        'Returns',
      );
      const deleted = await ok(
        'specialists',
        'delete',
        '--org',
        'spec-org',
        '--assistant',
        'Support',
        '--name',
        'returns',
      );
      const { action: _action, ...view } = created;
      expect(deleted).toEqual({ ...view, deleted: true });
      expect(await rows('SELECT id FROM specialists WHERE id = $1', [created.id])).toEqual([]);
      expect(
        await fails(
          'specialists',
          'delete',
          '--org',
          'spec-org',
          '--assistant',
          'Support',
          '--name',
          'returns',
        ),
      ).toContain('assistant Support has no specialist "returns"');
    });

    it('refuses invalid specialists and changes nothing', async () => {
      const before = await specialistRows('spec-org');
      const set = (...flags: string[]) =>
        fails('specialists', 'set', '--org', 'spec-org', '--assistant', 'Support', ...flags);
      expect(await set('--name', 'Billing', '--role', 'x')).toContain('specialist name must be');
      expect(await set('--name', 'generic', '--role', 'x')).toContain('not be "generic"');
      expect(await set('--name', 'refunds')).toContain('needs a role');
      expect(await set('--name', 'refunds', '--role', 'x', '--base-url', 'ftp://x')).toContain(
        'http or https',
      );
      expect(await set('--name', 'refunds', '--role', 'x', '--model-json', '{"provider":"magic"}')).toContain(
        'model.provider must be',
      );
      expect(await set('--name', 'billing', '--inherit-model', '--model', 'x')).toContain(
        '--inherit-model cannot be combined with --model',
      );
      expect(await set('--name', 'refunds', '--role', 'x', '--tools', 'a b')).toContain('tools must be');
      expect(await fails('specialists', 'set', '--org', 'spec-org', '--name', 'x')).toContain(
        'missing --assistant',
      );
      expect(await fails('specialists', 'list', '--org', 'spec-org', '--assistant', 'Nobody')).toContain(
        'organization spec-org has no assistant "Nobody"',
      );

      await ok('assistants', 'create', '--org', 'spec-org', '--name', 'Twin');
      await ok('assistants', 'create', '--org', 'spec-org', '--name', 'Twin');
      expect(
        await fails(
          'specialists',
          'set',
          '--org',
          'spec-org',
          '--assistant',
          'Twin',
          '--name',
          'a',
          '--role',
          'r',
        ),
      ).toContain('2 assistants are named "Twin"');
      expect(await specialistRows('spec-org')).toEqual(before);
    });

    it("neither sees nor changes another organization's specialists", async () => {
      const before = await specialistRows('spec-org');
      expect(before.length).toBeGreaterThan(0);
      for (const reference of [support.id, 'Support']) {
        expect(await fails('specialists', 'list', '--org', 'spec-other', '--assistant', reference)).toContain(
          'organization spec-other has no assistant',
        );
        expect(
          await fails(
            'specialists',
            'set',
            '--org',
            'spec-other',
            '--assistant',
            reference,
            '--name',
            'billing',
            '--role',
            'stolen',
          ),
        ).toContain('has no assistant');
        expect(
          await fails(
            'specialists',
            'delete',
            '--org',
            'spec-other',
            '--assistant',
            reference,
            '--name',
            'billing',
          ),
        ).toContain('has no assistant');
      }
      expect(await specialistRows('spec-org')).toEqual(before);
      expect(await specialistRows('spec-other')).toEqual([]);
    });
  });

  describe('apply with tools and specialists', () => {
    const declaration = (billingRole: string) => `
organizations:
  - slug: spec-apply
    tools:
      - name: web_search
        kind: web_search
        config: { provider: searxng, baseUrl: "http://127.0.0.1:9" }
    assistants:
      - name: Desk
        instructions: You are the front desk.
        model: { provider: openai-compatible, baseUrl: "${upstream.url}", model: desk-model }
        tools: [web_search]
        specialists:
          - name: billing
            role: ${JSON.stringify(billingRole)}
            instructions: You are the billing specialist.
            model:
              provider: openai-compatible
              baseUrl: "${upstream.url}"
              model: billing-model
              temperature: 0.2
              functionCalling: true
            tools: [web_search]
          - name: returns
            role: Returns and exchanges
  - slug: spec-apply-two
    assistants:
      - name: Plain
`;

    async function snapshot() {
      return {
        assistants: await rows(
          `SELECT a.id, a.name, a.model, a.tool_names, a.updated_at FROM assistants a
             JOIN organizations o ON o.id = a.organization_id WHERE o.slug LIKE 'spec-apply%' ORDER BY a.name`,
        ),
        specialists: await specialistRows('spec-apply'),
        organizations: await rows(
          "SELECT slug FROM organizations WHERE slug LIKE 'spec-apply%' ORDER BY slug",
        ),
      };
    }

    it('creates the tool, the assistant with its tools and its specialists; the second run changes nothing', async () => {
      const file = await writeWorkFile('agents.yaml', declaration('Invoices and refunds'));
      const first = await ok('apply', '-f', file);
      expect(first.changes.map((c: any) => `${c.kind} ${c.key} ${c.action}`)).toEqual([
        'organization spec-apply created',
        'organization spec-apply-two created',
        'tool spec-apply/web_search created',
        'assistant spec-apply/Desk created',
        'assistant spec-apply-two/Plain created',
        'specialist spec-apply/Desk/billing created',
        'specialist spec-apply/Desk/returns created',
      ]);
      const afterFirst = await snapshot();
      expect(afterFirst.assistants[0]).toMatchObject({ name: 'Desk', tool_names: ['web_search'] });
      expect(afterFirst.specialists).toEqual([
        {
          id: expect.any(String),
          assistant: 'Desk',
          name: 'billing',
          role: 'Invoices and refunds',
          instructions: 'You are the billing specialist.',
          model: {
            provider: 'openai-compatible',
            baseUrl: upstream.url,
            model: 'billing-model',
            temperature: 0.2,
            functionCalling: true,
          },
          tool_names: ['web_search'],
          updated_at: expect.any(Date),
        },
        {
          id: expect.any(String),
          assistant: 'Desk',
          name: 'returns',
          role: 'Returns and exchanges',
          instructions: '',
          model: null,
          tool_names: [],
          updated_at: expect.any(Date),
        },
      ]);

      const second = await ok('apply', '-f', file);
      expect(second.summary).toEqual({ created: 0, updated: 0, unchanged: 7 });
      expect(second.changes.map((c: any) => c.id)).toEqual(first.changes.map((c: any) => c.id));
      expect(await snapshot()).toEqual(afterFirst);

      // The CLI shows what the file declared.
      const desk = afterFirst.assistants[0];
      expect((await ok('assistants', 'show', '--org', 'spec-apply', desk.id)).tools).toEqual(['web_search']);
      expect(
        (await ok('specialists', 'list', '--org', 'spec-apply', '--assistant', 'Desk')).map(
          (s: { name: string; tools: string[] }) => [s.name, s.tools],
        ),
      ).toEqual([
        ['billing', ['web_search']],
        ['returns', []],
      ]);
    });

    it('serves a turn with the declared specialist, its model and its tools', async () => {
      const key = (await ok('keys', 'create', '--org', 'spec-apply', '--name', 't', '--scopes', 'assistant'))
        .secret;
      const [desk] = (await snapshot()).assistants;
      upstream.script(
        { toolCalls: [{ id: 'call_1', name: 'transfer_to_billing', arguments: '{"reason":"an invoice"}' }] },
        { text: 'Billing here.' },
      );
      const reply = await call(app.baseUrl, 'POST', '/v1/responses', {
        key,
        body: { model: `asst_${desk.id}`, input: 'Where is my invoice?' },
      });
      expect(reply.status).toBe(200);
      expect(reply.body.output[0]).toMatchObject({
        type: 'handover',
        from_specialist: 'generic',
        to_specialist: 'billing',
        reason: 'an invoice',
      });
      expect(reply.body.output_text).toBe('Billing here.');
      const [generic, billing] = upstream.requests.slice(-2).map((r) => r.body);
      const toolNames = (body: any) => body.tools.map((t: { function: { name: string } }) => t.function.name);
      expect(generic.model).toBe('desk-model');
      expect(toolNames(generic)).toEqual(
        expect.arrayContaining(['web_search', 'transfer_to_billing', 'transfer_to_returns']),
      );
      expect(billing.model).toBe('billing-model');
      expect(billing.temperature).toBe(0.2);
      expect(billing.messages[0]).toEqual({ role: 'system', content: 'You are the billing specialist.' });
      expect(toolNames(billing)).toEqual(expect.arrayContaining(['web_search', 'transfer_to_generic']));
    });

    it('updates only the specialist that changed', async () => {
      const before = await snapshot();
      const file = await writeWorkFile('agents.yaml', declaration('Invoices, refunds and payment plans'));
      const report = await ok('apply', '-f', file);
      expect(report.summary).toEqual({ created: 0, updated: 1, unchanged: 6 });
      expect(report.changes.find((c: any) => c.action === 'updated')).toMatchObject({
        kind: 'specialist',
        key: 'spec-apply/Desk/billing',
      });
      const after = await snapshot();
      expect(after.specialists[0].role).toBe('Invoices, refunds and payment plans');
      expect(after.specialists[1]).toEqual(before.specialists[1]);
      expect(after.assistants).toEqual(before.assistants);
    });

    it('aborts the whole file on a bad specialist: invalid name, missing role or bad model', async () => {
      const before = await snapshot();
      const withSpecialist = (specialist: string) => `
organizations:
  - slug: spec-apply-new
    assistants:
      - name: Fresh
  - slug: spec-apply
    assistants:
      - name: Desk
        instructions: Changed, but not for long.
        specialists:
          - name: billing
            role: Rolled back
          - ${specialist}
`;
      const cases: [string, string][] = [
        [
          '{ name: Billing-Team, role: x }',
          'organizations[1].assistants[0].specialists[1]: specialist name must be',
        ],
        ['{ name: refunds }', 'organizations[1].assistants[0].specialists[1]: a specialist needs a role'],
        [
          '{ name: refunds, role: x, model: { provider: openai-compatible, model: m } }',
          'organizations[1].assistants[0].specialists[1]: model.baseUrl is required',
        ],
        [
          '{ name: refunds, role: x, tools: web_search }',
          'organizations[1].assistants[0].specialists[1].tools must be a list',
        ],
        [
          '{ name: refunds, role: x, prompt: y }',
          'unknown key: organizations[1].assistants[0].specialists[1].prompt',
        ],
        ['{ name: billing, role: x }', 'specialists[1].name "billing" is already declared'],
      ];
      for (const [specialist, message] of cases) {
        const file = await writeWorkFile('bad-specialist.yaml', withSpecialist(specialist));
        expect(await fails('apply', '-f', file)).toContain(message);
      }
      expect(await snapshot()).toEqual(before);
    });
  });
});
