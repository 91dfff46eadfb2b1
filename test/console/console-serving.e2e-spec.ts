import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BrowserContext, Page } from 'playwright-core';
import { startTestApp, type SeededOrganization, type TestApp } from '../support/test-app.js';
import {
  buildConsole,
  consoleSuite,
  openConsoleBrowser,
  screenshot,
  seriousViolations,
  type ConsoleBrowser,
} from './browser.js';

/**
 * How the console is served and kept (the pages themselves: console.e2e-spec.ts): its headers
 * and build, the sign-in refusal, a path prefix in front of the service, the idle timeout.
 */
consoleSuite('web console: serving and session (real browser)', () => {
  let app: TestApp;
  let browser: ConsoleBrowser;
  let acme: SeededOrganization;
  let context: BrowserContext;
  let page: Page;
  const expectAccessible = async () => expect(await seriousViolations(page)).toEqual([]);
  const shot = (name: string) => screenshot(page, name);

  beforeAll(async () => {
    await buildConsole();
    app = await startTestApp();
    acme = await app.seedOrganization('acme');
    browser = await openConsoleBrowser({ requests: [], cspViolations: [] });
    ({ context, page } = browser);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('is served under /console with a strict CSP, relative assets, and a sign-in page without violations', async () => {
    const redirect = await fetch(`${app.baseUrl}/console`, { redirect: 'manual' });
    expect([redirect.status, redirect.headers.get('location')]).toEqual([308, 'console/']);
    const index = await fetch(`${app.baseUrl}/console/`);
    expect(index.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(index.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await index.text();
    expect(html).toMatch(/src="\.\/assets\/index-[\w-]+\.js"/);
    expect(html).not.toMatch(/<script>|<script type="module">[^<]/);
    await page.goto(`${app.baseUrl}/console/`);
    await page.getByRole('heading', { name: 'Switchboard console' }).waitFor();
    await expectAccessible();
    await shot('sign-in');
  });

  it('refuses a key without the admin scope, by what the API said', async () => {
    await page.getByLabel('Admin API key or token').fill(acme.keys.full_access);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'no admin scope' }).waitFor();
  });

  it('works behind an ingress that serves the service under a path prefix', async () => {
    // A real reverse proxy on loopback: /sb/<path> -> the service's /<path>, as an ingress rewrites.
    const target = new URL(app.baseUrl);
    const proxy: Server = createServer((req, res) => {
      if (!req.url?.startsWith('/sb/')) {
        res.writeHead(404).end();
        return;
      }
      const upstream = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url.slice(3),
          headers: req.headers,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/sb`;
    const prefixed = await context.newPage();
    prefixed.setDefaultTimeout(10_000);
    const seen: string[] = [];
    prefixed.on('request', (request) => seen.push(new URL(request.url()).pathname));
    try {
      await prefixed.goto(`${base}/console`);
      expect(new URL(prefixed.url()).pathname).toBe('/sb/console/');
      await prefixed.getByLabel('Admin API key or token').fill(acme.keys.admin);
      await prefixed.getByRole('button', { name: 'Sign in' }).click();
      await prefixed.getByRole('cell', { name: 'acme assistant', exact: true }).waitFor();
      expect(seen.filter((path) => !path.startsWith('/sb/'))).toEqual([]);
      expect(seen).toContain('/sb/admin/v1/organizations');
    } finally {
      await prefixed.close();
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it('signs out after 15 idle minutes and forgets the credential', async () => {
    const tab = await context.newPage();
    tab.setDefaultTimeout(10_000);
    try {
      // The page's clock, moved forward instead of waiting: no sleeps.
      await tab.clock.install();
      await tab.goto(`${app.baseUrl}/console/`);
      await tab.getByLabel('Admin API key or token').fill(acme.keys.admin);
      await tab.getByRole('button', { name: 'Sign in' }).click();
      await tab.getByTestId('who').waitFor();
      await tab.clock.fastForward('16:00');
      await tab.getByLabel('Admin API key or token').waitFor();
      expect(await tab.evaluate('JSON.stringify(sessionStorage)')).toBe('{}');
    } finally {
      await tab.close();
    }
  });
});
