import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { chromium, type Browser, type BrowserContextOptions, type ConsoleMessage, type Page } from 'playwright-core';
import { mailedLink } from './consoleClient';

/** Headless Chromium of the machine (no downloads, no network of its own). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** A 375-px phone. */
export const phone: BrowserContextOptions = { viewport: { width: 375, height: 812 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };
/** A 1280-px desktop. */
export const desktop: BrowserContextOptions = { viewport: { width: 1280, height: 900 } };

export const phoneContext = (browser: Browser, options: BrowserContextOptions = {}) => browser.newContext({ ...phone, ...options });
export const desktopContext = (browser: Browser, options: BrowserContextOptions = {}) => browser.newContext({ ...desktop, ...options });

export interface WatchOptions {
  /** A console error that is part of the test's story (e.g. a refused request it makes on purpose). */
  expectedError?: (message: ConsoleMessage) => boolean;
  /** URL prefixes besides `baseUrl` and `data:` the page may ask for (e.g. `blob:`). */
  alsoAllowed?: string[];
}

/**
 * Collects into `problems` what must not happen on a page: console errors, uncaught errors (a CSP
 * violation shows as one of these) and requests to anywhere but `baseUrl` ("no assets from outside the
 * machine"). Dialogs are accepted.
 */
export function watchPage(page: Page, baseUrl: string, problems: string[], options: WatchOptions = {}): Page {
  const allowed = [baseUrl, 'data:', ...(options.alsoAllowed ?? [])];
  page.on('console', (message) => {
    if (message.type() === 'error' && !options.expectedError?.(message)) problems.push(`console error: ${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('request', (request) => {
    if (!allowed.some((prefix) => request.url().startsWith(prefix))) problems.push(`off-site request: ${request.url()}`);
  });
  page.on('dialog', (dialog) => dialog.accept());
  return page;
}

/** Where the console's screenshots go. */
export const consoleScreenshots = path.join('test-output', 'screenshots', 'console');

/** A full-page screenshot, `dir/name.png`. */
export async function shot(page: Page, dir: string, name: string) {
  fs.mkdirSync(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: true });
}

/** How wide the page's content is, in CSS pixels. */
export const contentWidth = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth);

/** The page fits its screen: nothing wider than the viewport, so no sideways scroll. */
export async function expectNoSideways(page: Page) {
  expect(await contentWidth(page), page.url()).to.be.at.most(page.viewportSize()!.width);
}

/** One Chromium for the suite (call it in a `describe`): launched before its tests, closed after them. */
export function useChromium(): () => Browser {
  let browser: Browser | undefined;
  before(async () => {
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
  });
  return () => browser!;
}

/** Follows the verification link e-mailed to this address, in a page logged in as the person who signed up with it. */
export async function confirmEmail(page: Page, baseUrl: string, email: string) {
  await page.goto(`${baseUrl}${await mailedLink(email, '/app/email/verify/')}`);
  await page.getByRole('heading', { name: 'Address confirmed' }).waitFor();
}
