import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { startTestApp, type SeededOrganization, type TestApp } from '../support/test-app.js';
import { startTestIdentityProvider, type TestIdentityProvider } from '../support/test-identity-provider.js';
import {
  ADMIN_AUDIENCE,
  ADMIN_GROUP,
  buildConsole,
  consoleSuite,
  openConsoleBrowser,
  screenshot,
  seriousViolations,
  type ConsoleBrowser,
} from './browser.js';

/**
 * The web console in Debian's Chromium against the production build, served by the service on
 * its own database: what a platform administrator and an organization's admin do with it, each
 * checked against what the API itself answers. No sleeps: every step waits for what it expects.
 */
consoleSuite('web console (real browser)', () => {
  let app: TestApp;
  let idp: TestIdentityProvider;
  let browser: ConsoleBrowser;
  let acme: SeededOrganization;
  let globex: SeededOrganization;
  let page: Page;
  const requests: string[] = [];
  const cspViolations: string[] = [];

  const api = async (path: string, key = acme.keys.admin) => {
    const res = await fetch(`${app.baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });
    return { status: res.status, body: (await res.json()) as any };
  };
  /** `fullPage: false` for a page too long to be worth a picture of all of it (hourly buckets). */
  const shot = (name: string, fullPage = true) => screenshot(page, name, fullPage);
  const expectAccessible = async () => expect(await seriousViolations(page)).toEqual([]);
  const signIn = async (credential: string) => {
    await page.goto(`${app.baseUrl}/console/`);
    await page.getByLabel('Admin API key or token').fill(credential);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('who').waitFor();
  };

  beforeAll(async () => {
    await buildConsole();
    idp = await startTestIdentityProvider({ alice: [ADMIN_GROUP] });
    app = await startTestApp({
      API_KEY_CACHE_TTL_SECONDS: '0',
      OIDC_ISSUER: idp.issuer,
      OIDC_CLIENT_ID: idp.audience,
      ADMIN_GROUP,
      ADMIN_AUDIENCE,
    });
    acme = await app.seedOrganization('acme');
    globex = await app.seedOrganization('globex');
    browser = await openConsoleBrowser({ requests, cspViolations }, app.baseUrl);
    ({ page } = browser);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await idp?.close();
  });

  it('a platform administrator sees every organization and sets a budget', async () => {
    await signIn(await idp.mint({ sub: 'alice', groups: [ADMIN_GROUP], aud: ADMIN_AUDIENCE }));
    await expect(page.getByTestId('who').textContent()).resolves.toContain('Platform administrator');
    await page.getByRole('link', { name: 'globex' }).waitFor();
    await page.getByLabel('Slug').fill('acme');
    await page.getByLabel('Monthly token budget (empty: none)').fill('100000');
    const saved = page.waitForResponse(
      (res) => res.url().endsWith('/admin/v1/organizations/acme') && res.request().method() === 'PUT',
    );
    await page.getByRole('button', { name: 'Save organization' }).click();
    expect((await saved).status()).toBe(200);
    await page.getByRole('cell', { name: '100,000' }).waitFor();
    await expectAccessible();
    await shot('organizations');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Admin API key or token').waitFor();
  });

  it('an organization admin signs in and sees only its organization', async () => {
    await signIn(acme.keys.admin);
    await expect(page.getByTestId('who').textContent()).resolves.toContain('Organization administrator');
    await page.getByRole('cell', { name: 'acme assistant', exact: true }).waitFor();
    expect(await page.getByRole('link', { name: 'Organizations' }).count()).toBe(0);
    // Another organization by a direct URL: the same "not found" as for one that does not exist.
    for (const ref of [globex.slug, globex.id]) {
      await page.goto(`${app.baseUrl}/console/#/org/${ref}/usage`);
      await page.getByRole('alert').filter({ hasText: 'Not found' }).waitFor();
      expect(await page.getByText('globex').count()).toBe(0);
    }
    expect((await api(`/admin/v1/organizations/${globex.slug}/usage`)).status).toBe(404);
  });

  it('creates an assistant, showing a validation error next to its field first', async () => {
    await page.goto(`${app.baseUrl}/console/#/org/acme/assistants`);
    await page.getByRole('button', { name: 'New assistant' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Support');
    await page.getByLabel('Instructions').fill('Answer briefly.');
    await page.getByLabel('Model settings (JSON)').fill('{"provider": "nope"}');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.locator('#assistant-model-error').filter({ hasText: 'model.provider' }).waitFor();
    await expectAccessible();
    await shot('assistant-form');
    await page.getByLabel('Model settings (JSON)').fill('{"provider": "offline"}');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('cell', { name: 'Support', exact: true }).waitFor();
    const listed = (await api('/admin/v1/organizations/acme/assistants')).body.data;
    expect(listed.map((a: any) => a.name).sort()).toEqual(['Support', 'acme assistant']);
    await expectAccessible();
    await shot('assistants');
  });

  it('manages tools, gateways and specialists (model and tools edited), deletes included, each audited', async () => {
    await page.getByRole('link', { name: 'Tools and gateways' }).click();
    await page.getByLabel('Tool name').fill('lookup');
    await page.getByLabel('Configuration (JSON, docs/tools.md)').fill('{"method": "GET"}');
    await page.getByRole('button', { name: 'Save tool' }).click();
    await page.locator('#tool-config-error').waitFor();
    await page.getByLabel('Configuration (JSON, docs/tools.md)').fill(
      JSON.stringify({
        method: 'GET',
        urlTemplate: 'https://orders.example.com/orders/{id}',
        parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
      }),
    );
    await page.getByRole('button', { name: 'Save tool' }).click();
    await page.getByTestId('tools-table').getByRole('cell', { name: 'lookup', exact: true }).waitFor();
    await page.getByLabel('Gateway name').fill('acme-ide');
    await page.getByRole('button', { name: 'Save gateway' }).click();
    await page.getByTestId('gateways-table').getByRole('cell', { name: 'acme-ide', exact: true }).waitFor();
    await expectAccessible();
    await shot('tools');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete gateway acme-ide' }).click();
    await page.getByTestId('gateways-table').waitFor({ state: 'detached' });
    await page.getByRole('link', { name: 'Assistants' }).click();
    await page.getByRole('button', { name: 'Specialists of Support' }).click();
    await page.getByLabel('Specialist name').fill('billing');
    await page.getByLabel('Role').fill('Invoices and refunds');
    await page.getByRole('button', { name: 'Save specialist' }).click();
    await page.getByRole('cell', { name: 'Invoices and refunds' }).waitFor();
    await page.getByRole('cell', { name: "the assistant's" }).waitFor();
    await expectAccessible();
    // Editing its model and tools: the API's refusal under the model field, then saved and read back.
    await page.getByRole('button', { name: 'Edit specialist billing' }).click();
    const specialistModel = page.getByLabel('Specialist model settings (JSON');
    await specialistModel.fill('{"provider": "nope"}');
    await page.getByLabel('Specialist tools (comma-separated names)').fill('lookup');
    await page.getByRole('button', { name: 'Save specialist' }).click();
    await page.locator('#specialist-model-error').filter({ hasText: 'model.provider' }).waitFor();
    await expectAccessible();
    await specialistModel.fill('{"provider": "offline", "contextWindow": 8000, "functionCalling": false}');
    const edited = page.waitForResponse(
      (res) => res.url().endsWith('/specialists/billing') && res.request().method() === 'PUT',
    );
    await page.getByRole('button', { name: 'Save specialist' }).click();
    expect((await edited).status()).toBe(200);
    await page.getByRole('cell', { name: 'lookup', exact: true }).waitFor();
    await expectAccessible();
    const specialists = (await api(`/admin/v1/organizations/acme/assistants/Support/specialists`)).body.data;
    expect(specialists).toHaveLength(1);
    expect(specialists[0]).toMatchObject({
      name: 'billing',
      role: 'Invoices and refunds',
      model: { provider: 'offline', contextWindow: 8000, functionCalling: false },
      tools: ['lookup'],
    });
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete specialist billing' }).click();
    await page.getByText('No specialists.').waitFor();
    await page.getByRole('link', { name: 'Tools and gateways' }).click();
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete tool lookup' }).click();
    await page.getByTestId('tools-table').waitFor({ state: 'detached' });
    const audit = (await api('/admin/v1/audit-log?limit=100')).body.data;
    const deleted = audit.filter((row: any) => row.action === 'deleted').map((row: any) => row.resourceType);
    expect(deleted.sort()).toEqual(['gateway', 'specialist', 'tool']);
  });

  let responseId = '';
  let secret = '';
  let keyId = '';
  it('issues a key whose secret is shown once and copies it; the SDK calls the assistant with it', async () => {
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Name', { exact: true }).fill('support-bot');
    await page.getByRole('checkbox', { name: 'full_access' }).check();
    const issued = page.waitForResponse(
      (res) => res.url().endsWith('/keys') && res.request().method() === 'POST',
    );
    await page.getByRole('button', { name: 'Issue key' }).click();
    keyId = ((await (await issued).json()) as { id: string }).id;
    secret = (await page.getByTestId('secret').textContent()) ?? '';
    expect(secret).toMatch(/^swb_/);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    // The page's own clipboard, read in the page (this file is compiled without DOM types).
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
    await expectAccessible();
    await shot('keys');
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.getByTestId('secret').count()).toBe(0);

    const support = (await api('/admin/v1/organizations/acme/assistants/Support')).body;
    const client = new OpenAI({ apiKey: secret, baseURL: `${app.baseUrl}/v1`, maxRetries: 0 });
    const response = await client.responses.create(
      { model: `asst_${support.id}`, input: 'Hello there, how are you today?' },
      { headers: { 'x-user-id': 'customer-7' } },
    );
    expect(response.status).toBe('completed');
    responseId = response.id;
  });

  it('shows the turn in usage with the API totals, and exports the API lines as CSV', async () => {
    await page.getByRole('link', { name: 'Usage and cost' }).click();
    await page.getByTestId('usage-table').waitFor();
    const month = (await api('/admin/v1/organizations/acme/usage?period=month')).body.data;
    expect(month).toHaveLength(1);
    await expect(page.getByTestId('total-turns').textContent()).resolves.toBe(String(month[0].turns));
    await expect(page.getByTestId('total-tokens').textContent()).resolves.toBe(
      month[0].total_tokens.toLocaleString('en-US'),
    );
    expect(month[0].turns).toBe(1);
    const left = (100000 - month[0].total_tokens).toLocaleString('en-US');
    await expect(page.getByTestId('budget-left').textContent()).resolves.toBe(`${left} of 100,000`);
    await page.getByLabel('Group by').selectOption('user');
    const shown = page.waitForResponse((res) => res.url().includes('group_by=user'));
    await page.getByRole('button', { name: 'Show' }).click();
    await shown;
    await page.getByRole('cell', { name: 'customer-7' }).waitFor();
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Export CSV' }).click();
    const csv = await readFile(await (await download).path(), 'utf8');
    const lines = (await api('/admin/v1/organizations/acme/usage?group_by=user')).body.data;
    const [header, ...rows] = csv.trim().split('\r\n');
    expect(header).toBe(
      'period,user_id,turns,input_tokens,cached_tokens,output_tokens,reasoning_tokens,total_tokens',
    );
    expect(rows).toEqual(
      lines.map((l: any) =>
        [
          l.period,
          l.user_id ?? '',
          l.turns,
          l.input_tokens,
          l.cached_tokens,
          l.output_tokens,
          l.reasoning_tokens,
          l.total_tokens,
        ].join(','),
      ),
    );
    await expectAccessible();
    await shot('usage');
  });

  it('revokes the key, after which the SDK is refused', async () => {
    await page.getByRole('link', { name: 'API keys' }).click();
    page.once('dialog', (dialog) => void dialog.accept());
    await page
      .locator(`tr[data-key-id="${keyId}"]`)
      .getByRole('button', { name: /Revoke/ })
      .click();
    await page
      .locator(`tr[data-key-id="${keyId}"]`)
      .getByText(/^Revoked/)
      .waitFor();
    const keys = (await api('/admin/v1/organizations/acme/keys')).body.data;
    expect(keys.find((k: any) => k.id === keyId).revokedAt).not.toBeNull();
    const client = new OpenAI({ apiKey: secret, baseURL: `${app.baseUrl}/v1`, maxRetries: 0 });
    await expect(
      client.responses.create({ model: `asst_${acme.assistantId}`, input: 'hi' }),
    ).rejects.toMatchObject({
      status: 401,
    });
  });

  it('shows the audit log with filters and before/after diffs', async () => {
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByTestId('audit-table').waitFor();
    await page.getByLabel('Action').selectOption('revoked');
    await page.getByRole('cell', { name: new RegExp(keyId) }).waitFor();
    await page.getByRole('button', { name: 'Changes' }).first().click();
    await page.getByRole('row', { name: /revokedAt/ }).waitFor();
    await expectAccessible();
    await shot('audit-log');
    await page.getByLabel('Action').selectOption('created');
    await page.getByLabel('Object (type or id)').fill('assistant');
    await expect(page.getByTestId('audit-table').getByRole('row').count()).resolves.toBe(2);
    expect(cspViolations).toEqual([]);
  });

  it("shows a user's history and a response's record to a key that also has the user scope", async () => {
    // The admin-only key: the API refuses the user routes, and the page says why.
    await page.getByRole('link', { name: 'Conversations' }).click();
    await page.getByLabel('End user id (x-user-id)').fill('customer-7');
    await page.getByRole('button', { name: 'Show history' }).click();
    await page.getByRole('alert').filter({ hasText: 'needs an API key with the "user" scope' }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(await app.createKey(acme.id, ['admin', 'user']));
    await page.getByRole('link', { name: 'Conversations' }).click();
    await page.getByLabel('End user id (x-user-id)').fill('customer-7');
    await page.getByRole('button', { name: 'Show history' }).click();
    await page.getByTestId('conversations-table').waitFor();
    await page
      .getByRole('button', { name: /^Messages/ })
      .first()
      .click();
    await page
      .getByRole('region', { name: 'Messages' })
      .getByText('You said: Hello there, how are you today?')
      .waitFor();
    await page.getByLabel('Response id (resp_…)').fill(responseId);
    await page.getByRole('button', { name: 'Show record' }).click();
    await expect(page.getByTestId('response-record').textContent()).resolves.toContain('"usage"');
    await expectAccessible();
    await shot('conversations');
  });

  it("erases a user's data after a typed confirmation, and the audit log shows the erasure", async () => {
    // Still on Conversations, with customer-7 entered above.
    await page.getByRole('button', { name: "Erase this user's data…" }).click();
    const confirm = page.getByRole('button', { name: 'Erase permanently' });
    expect(await confirm.isDisabled()).toBe(true);
    await page.getByLabel('Type the user id (customer-7) to confirm').fill('customer-');
    expect(await confirm.isDisabled()).toBe(true);
    await page.getByLabel('Type the user id (customer-7) to confirm').fill('customer-7');
    await expectAccessible();
    await shot('user-erasure');
    const erased = page.waitForResponse((res) => res.request().method() === 'DELETE');
    await confirm.click();
    const reply = await erased;
    expect([reply.status(), new URL(reply.url()).pathname]).toEqual([
      200,
      '/admin/v1/organizations/acme/users/customer-7',
    ]);
    await expect(page.getByTestId('erasure-report').textContent()).resolves.toBe(
      'Erased customer-7: 1 conversations, 1 responses, 2 messages, 0 claims, 0 memory items, 0 memory opt-outs, 0 user files.',
    );
    await page.getByRole('button', { name: 'Show history' }).click();
    await page.getByText('No conversations for this user.').waitFor();
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByLabel('Action').selectOption('erased');
    await page.getByTestId('audit-table').getByRole('cell', { name: 'erased' }).waitFor();
    const audit = (await api('/admin/v1/audit-log?limit=100')).body.data;
    expect(audit.filter((row: any) => row.action === 'erased').map((row: any) => row.resourceType)).toEqual([
      'user',
    ]);
  });

  it('passes axe in dark mode and made no request outside the service', async () => {
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.getByRole('link', { name: 'Usage and cost' }).click();
    await page.getByTestId('usage-table').waitFor();
    await expectAccessible();
    await shot('usage-dark');
    const foreign = requests.filter(
      (url) => !url.startsWith(app.baseUrl) && !url.startsWith('blob:') && !url.startsWith('data:'),
    );
    expect(foreign).toEqual([]);
  });

  it("shows over 1,000 seeded turns with exactly the API's totals, by model and in hourly buckets", async () => {
    await page.emulateMedia({ colorScheme: 'light' });
    const umbrella = await app.seedOrganization('umbrella');
    // 1,200 turns' usage written straight into the rollups the turn store writes (a turn a few
    // hours apart over ten days; three models, two of them priced), for speed.
    await app.dataSource.query(
      `WITH turns AS (
         SELECT date_trunc('hour', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' - make_interval(hours => (i * 7) % 240) AS hour,
                (ARRAY['model-a', 'model-b', 'offline'])[i % 3 + 1] AS model,
                CASE WHEN i % 5 = 0 THEN '' ELSE 'user-' || (i % 17) END AS user_id,
                10 + i % 50 AS input, i % 5 AS cached, 5 + i % 30 AS output, i % 3 AS reasoning
           FROM generate_series(1, 1200) AS i)
       INSERT INTO usage_hourly (organization_id, hour, assistant_id, specialist, api_key_id, user_id, model, currency,
                                 turns, input_tokens, cached_tokens, output_tokens, reasoning_tokens, cost)
       SELECT $1, hour, $2, '', $3, user_id, model, CASE WHEN model = 'offline' THEN '' ELSE 'USD' END, count(*),
              sum(input), sum(cached), sum(output), sum(reasoning),
              CASE WHEN model = 'offline' THEN 0 ELSE sum(input * 0.0000015 + output * 0.000002) END
         FROM turns GROUP BY hour, user_id, model`,
      [umbrella.id, umbrella.assistantId, randomUUID()],
    );
    await app.dataSource.query(
      `INSERT INTO usage_daily (organization_id, day, assistant_id, specialist, api_key_id, user_id, currency,
                                turns, input_tokens, cached_tokens, output_tokens, reasoning_tokens, cost)
       SELECT organization_id, (hour AT TIME ZONE 'UTC')::date, assistant_id, specialist, api_key_id, user_id, currency,
              sum(turns), sum(input_tokens), sum(cached_tokens), sum(output_tokens), sum(reasoning_tokens), sum(cost)
         FROM usage_hourly WHERE organization_id = $1 GROUP BY 1, 2, 3, 4, 5, 6, 7`,
      [umbrella.id],
    );
    const to = new Date().toISOString().slice(0, 10);
    const from = new Date(Date.parse(to) - 10 * 86_400_000).toISOString().slice(0, 10);
    const usage = async (query: string) =>
      (await api(`/admin/v1/organizations/umbrella/usage?from=${from}&to=${to}${query}`, umbrella.keys.admin))
        .body;
    const formatCost = (cost: Record<string, number>) =>
      Object.keys(cost).length === 0
        ? '—'
        : Object.entries(cost)
            .map(([currency, value]) => `${value} ${currency}`)
            .join(', ');
    const row = (line: any, dimensions: string[]) => [
      line.period,
      ...dimensions.map((dimension) => line[dimension]),
      ...['turns', 'input_tokens', 'cached_tokens', 'output_tokens', 'reasoning_tokens', 'total_tokens'].map(
        (count) => line[count].toLocaleString('en-US'),
      ),
      formatCost(line.cost),
    ];
    /** Shows a query in the console and waits until the table (and the chart) show its answer. */
    const show = async (period: string, groupBy: { label: string } | string) => {
      await page.getByLabel('From (UTC day)').fill(from);
      await page.getByLabel('To (UTC day)').fill(to);
      await page.getByLabel('Buckets').selectOption(period);
      await page.getByLabel('Group by').selectOption(groupBy);
      const answered = page.waitForResponse(
        (res) =>
          res.url().includes('/organizations/umbrella/usage?') && res.url().includes(`period=${period}`),
      );
      await page.getByRole('button', { name: 'Show' }).click();
      await answered;
      const query = new URLSearchParams({ from, to, period });
      if (typeof groupBy === 'string') query.set('group_by', groupBy);
      await page.locator(`[data-testid="usage-table"][data-query="${query.toString()}"]`).waitFor();
      await page
        .locator(`[data-testid="usage-chart"][data-query="from=${from}&to=${to}&period=${period}"]`)
        .waitFor();
    };
    const tableRows = async () =>
      (await page.getByTestId('usage-table').locator('tbody tr').allInnerTexts()).map((text) =>
        text.split('\t'),
      );
    const cards = async () => ({
      turns: await page.getByTestId('total-turns').textContent(),
      tokens: await page.getByTestId('total-tokens').textContent(),
      cost: await page.getByTestId('total-cost').textContent(),
    });
    const expectedCards = (total: any) => ({
      turns: total.turns.toLocaleString('en-US'),
      tokens: total.total_tokens.toLocaleString('en-US'),
      cost: formatCost(total.cost),
    });

    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(umbrella.keys.admin);
    await page.getByRole('link', { name: 'Usage and cost' }).click();

    // Daily, by model: every row and the totals are the API's.
    await show('day', 'model');
    const byModel = await usage('&period=day&group_by=model');
    expect(byModel.total.turns).toBe(1200);
    expect(byModel.data.length).toBeGreaterThan(10);
    expect(await tableRows()).toEqual(byModel.data.map((line: any) => row(line, ['model'])));
    expect(await cards()).toEqual(expectedCards(byModel.total));
    await expectAccessible();
    await shot('usage-by-model', false);

    // Hourly, ungrouped: the table, each bar of the chart and the totals are the API's hourly lines.
    await show('hour', { label: 'Nothing (totals)' });
    const hourly = await usage('&period=hour');
    expect(hourly.data.length).toBeGreaterThan(200);
    expect(await tableRows()).toEqual(hourly.data.map((line: any) => row(line, [])));
    const bars = await page.getByTestId('usage-chart').locator('rect.bar > title').allTextContents();
    expect(bars).toEqual(
      hourly.data.map((line: any) => `${line.period}: ${line.total_tokens.toLocaleString('en-US')} tokens`),
    );
    expect(await cards()).toEqual(expectedCards(hourly.total));
    // Hours add up to days, whatever the grouping: the same totals from both reads.
    expect(hourly.total).toEqual(byModel.total);
    await expectAccessible();
    await shot('usage-hourly', false);
    expect(cspViolations).toEqual([]);
  });
});
