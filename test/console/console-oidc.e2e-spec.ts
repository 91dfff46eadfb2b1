import type { BrowserContext, Page } from 'playwright-core';
import { startPkceIdentityProvider, type PkceIdentityProvider } from '../support/pkce-identity-provider.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
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

const CLIENT_ID = 'switchboard-console';

/**
 * A platform administrator signs in to the console with the identity provider (authorization code
 * + PKCE, in the browser), against a real provider on 127.0.0.1 and the production build.
 */
consoleSuite('web console: sign-in with the identity provider (real browser)', () => {
  let idp: PkceIdentityProvider;
  let app: TestApp;
  let browser: ConsoleBrowser;
  let context: BrowserContext;
  let page: Page;
  const requests: string[] = [];
  const cspViolations: string[] = [];

  beforeAll(async () => {
    await buildConsole();
    idp = await startPkceIdentityProvider({ sub: 'alice', groups: [ADMIN_GROUP], audience: ADMIN_AUDIENCE });
    app = await startTestApp({
      OIDC_ISSUER: idp.issuer,
      OIDC_CLIENT_ID: 'switchboard-backend',
      ADMIN_GROUP,
      ADMIN_AUDIENCE,
      CONSOLE_OIDC_CLIENT_ID: CLIENT_ID,
    });
    idp.registerClient(CLIENT_ID, `${app.baseUrl}/console/`);
    await app.seedOrganization('acme');
    browser = await openConsoleBrowser({ requests, cspViolations });
    ({ context, page } = browser);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await idp?.close();
  });

  it('signs a platform administrator in with authorization code + PKCE; the token stays in the tab', async () => {
    const served = await page.goto(`${app.baseUrl}/console/`);
    // The page may reach the issuer (discovery, token endpoint) and nothing else beyond itself.
    expect(served?.headers()['content-security-policy']).toContain(`connect-src 'self' ${idp.issuer};`);
    const button = page.getByRole('button', { name: 'Sign in with the identity provider' });
    await button.waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'sign-in-oidc');
    await button.click();
    await page.getByTestId('who').filter({ hasText: 'Platform administrator' }).waitFor();
    await page.getByRole('link', { name: 'acme' }).waitFor();
    // The code was redeemed once, with the verifier of the challenge sent, and left the address bar.
    expect(idp.redemptions).toEqual([{ clientId: CLIENT_ID, verified: true }]);
    expect(page.url()).not.toContain('code=');
    const token = await page.evaluate<string>('sessionStorage.getItem("switchboard.console.credential")');
    expect(token.split('.')).toHaveLength(3);
    expect(await page.evaluate('sessionStorage.getItem("switchboard.console.oidc-pending")')).toBeNull();
    expect(await context.cookies()).toEqual([]);
    // The token is an ordinary platform credential of the admin API.
    const listed = await fetch(`${app.baseUrl}/admin/v1/organizations`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(listed.status).toBe(200);
    expect(await seriousViolations(page)).toEqual([]);
    expect(cspViolations).toEqual([]);
    const foreign = requests.filter((url) => !url.startsWith(app.baseUrl) && !url.startsWith(idp.issuer));
    expect(foreign).toEqual([]);
  });

  it('refuses a redirect back that this tab did not start', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.goto(`${app.baseUrl}/console/?code=forged&state=forged`);
    await page.getByRole('alert').filter({ hasText: 'not for a sign-in started in this tab' }).waitFor();
    expect(page.url()).toBe(`${app.baseUrl}/console/`);
    expect(await page.getByTestId('who').count()).toBe(0);
    expect(idp.redemptions).toHaveLength(1);
  });
});
