/**
 * Browser helpers for the dashboard's end-to-end tests: Debian's chromium driven by playwright-core (no
 * browser download), one fresh context per test, a screenshot of each test's final screen in test-artifacts/.
 */
import { createHmac } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { SIGNED_IN_COOKIE } from '@svcenv/contract/constants';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { repoRoot } from '../../server/test/harness.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const artifacts = join(repoRoot, 'test-artifacts');

/**
 * Whether the browser tests can run. Under CI=true a missing chromium is a failure (the caller throws),
 * never a silent skip; `.ci/run` installs it.
 */
export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.CI === 'true') {
    throw new Error(`chromium is missing at ${CHROMIUM}: apt-get install -y chromium (see .ci/run)`);
  }
  return false;
}

export async function launch(): Promise<Browser> {
  return chromium.launch({
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
}

export interface Tab {
  context: BrowserContext;
  page: Page;
  /** Every CSP violation and uncaught error the page reported. */
  problems: string[];
}

export async function openTab(browser: Browser, baseURL: string, width = 1280): Promise<Tab> {
  const context = await browser.newContext({
    baseURL,
    viewport: { width, height: width < 600 ? 844 : 860 },
    deviceScaleFactor: 1,
    acceptDownloads: true,
  });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/status of 4\d\d/.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  return { context, page, problems };
}

/**
 * Signs the tab's browser in with `jwt` as the server would after a login (ADR 0014): the httpOnly,
 * SameSite=Strict session cookie, shared by every tab of that browser context.
 */
export async function signIn(tab: Tab, baseURL: string, jwt: string): Promise<void> {
  await tab.context.addCookies([
    { name: 'svcenv_session', value: jwt, url: baseURL, httpOnly: true, sameSite: 'Strict' },
    { name: SIGNED_IN_COOKIE, value: '1', url: baseURL, sameSite: 'Strict' },
  ]);
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(artifacts, { recursive: true });
  // From the top, so sticky headers sit where a person sees them.
  await page.evaluate(() => scrollTo(0, 0));
  await page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
}

/** RFC 6238 TOTP (SHA-1, 30 s, 6 digits, D13) from a base32 secret, as an authenticator app computes it. */
export function totp(secretBase32: string, at = Date.now()): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const ch of secretBase32.replace(/=+$/, '').toUpperCase()) {
    const v = alphabet.indexOf(ch);
    if (v < 0) continue;
    bits += v.toString(2).padStart(5, '0');
  }
  const bytes: number[] = [];
  for (let i = 0; i + 8 <= bits.length; i += 8) bytes.push(Number.parseInt(bits.slice(i, i + 8), 2));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(at / 1000 / 30)));
  const h = createHmac('sha1', Buffer.from(bytes)).update(counter).digest();
  const o = h[h.length - 1]! & 0xf;
  const n = ((h[o]! & 0x7f) << 24) | (h[o + 1]! << 16) | (h[o + 2]! << 8) | h[o + 3]!;
  return String(n % 1_000_000).padStart(6, '0');
}
