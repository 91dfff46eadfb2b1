import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/**
 * Whether the browser suite runs: always in CI (where a missing browser is a failure, not a
 * skip: .ci/run installs Debian's chromium), and locally when the browser is installed.
 */
export function browserSuiteEnabled(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.CI) return true;
  process.stdout.write(
    `console browser suite skipped: ${CHROMIUM} is missing (apt-get install -y chromium); CI always runs it\n`,
  );
  return false;
}

/** The console's browser suites: `describe` where they run, `describe.skip` elsewhere. */
export const consoleSuite = browserSuiteEnabled() ? describe : describe.skip;

/** The platform administrators' group and the admin API's audience the suites configure. */
export const ADMIN_GROUP = '/platform/admins';
export const ADMIN_AUDIENCE = 'switchboard-admin';

/** With CONSOLE_SCREENSHOTS=1, refreshes docs/console/<name>.png from this run; else nothing. */
export async function screenshot(page: Page, name: string, fullPage = true): Promise<void> {
  if (process.env.CONSOLE_SCREENSHOTS !== '1') return;
  await mkdir('docs/console', { recursive: true });
  await page.screenshot({ path: `docs/console/${name}.png`, fullPage });
}

/**
 * The production build of the console (`vite build`, the second half of `npm run build`). Both
 * browser suites may build at once in parallel workers, so each builds into a folder of its own
 * and moves the files into dist/console one by one (a rename replaces atomically, and the same
 * sources give the same bytes): a service booting meanwhile never reads a half-emptied folder.
 */
export async function buildConsole(): Promise<void> {
  const out = join('dist', `console-build-${randomBytes(4).toString('hex')}`);
  await promisify(execFile)(
    process.execPath,
    [
      'node_modules/vite/bin/vite.js',
      'build',
      '--config',
      'console/vite.config.mjs',
      '--outDir',
      resolve(out),
    ],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  for (const file of await readdir(out, { recursive: true })) {
    const from = join(out, file);
    if ((await stat(from)).isDirectory()) continue;
    await mkdir(dirname(join('dist', 'console', file)), { recursive: true });
    await rename(from, join('dist', 'console', file));
  }
  await rm(out, { recursive: true, force: true });
}

export interface TestBrowser {
  browser: Browser;
  close(): Promise<void>;
}

/**
 * Debian's Chromium, headless, with the flags this machine needs (no calls home). Playwright
 * gives every launch a fresh, empty profile directory of its own (it refuses --user-data-dir).
 */
export async function launchBrowser(): Promise<TestBrowser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    browser,
    close: () => browser.close(),
  };
}

/**
 * A fresh context and page at a laptop's size. Every URL the page requests and every CSP violation
 * it reports are appended to `seen`; `clipboardOrigin` may use the clipboard. Every wait is for
 * something specific: a missing one fails in 10 s rather than 30.
 */
export async function openConsolePage(
  browser: Browser,
  seen: { requests: string[]; cspViolations: string[] },
  clipboardOrigin?: string,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  if (clipboardOrigin !== undefined) {
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: clipboardOrigin });
  }
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  page.on('request', (request) => seen.requests.push(request.url()));
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) seen.cspViolations.push(message.text());
  });
  return { context, page };
}

/** Chromium with one console page open; `close` closes the page's context, then the browser. */
export interface ConsoleBrowser {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

/** launchBrowser and openConsolePage in one, for a suite's `beforeAll` (see openConsolePage). */
export async function openConsoleBrowser(
  seen: { requests: string[]; cspViolations: string[] },
  clipboardOrigin?: string,
): Promise<ConsoleBrowser> {
  const chromium = await launchBrowser();
  try {
    const { context, page } = await openConsolePage(chromium.browser, seen, clipboardOrigin);
    return {
      context,
      page,
      close: async () => {
        await context.close();
        await chromium.close();
      },
    };
  } catch (error) {
    await chromium.close();
    throw error;
  }
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

/**
 * axe-core's serious and critical violations on the page as it is. axe is evaluated through the
 * DevTools protocol, which the page's CSP does not govern (an injected <script> would be refused,
 * as it should be).
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: AxeViolation[] }> } }).axe;
    return (await axe.run()).violations;
  });
  return violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
}
