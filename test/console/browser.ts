import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { chromium, type Browser, type Page } from 'playwright-core';

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

/** The production build of the console (`vite build`, the second half of `npm run build`). */
export async function buildConsole(): Promise<void> {
  await promisify(execFile)(
    process.execPath,
    ['node_modules/vite/bin/vite.js', 'build', '--config', 'console/vite.config.mjs'],
    { maxBuffer: 16 * 1024 * 1024 },
  );
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
