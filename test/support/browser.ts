import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import chromium from '@sparticuz/chromium';
import { chromium as playwright, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, inject } from 'vitest';

/** Where screenshots land: test-artifacts/screenshots at the repository's root (git-ignored). */
export const SCREENSHOTS_DIR = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '../../test-artifacts/screenshots',
);

/**
 * Flags of @sparticuz/chromium's (made for AWS Lambda) that a test browser must not have: the
 * first two make it laxer than an operator's (a page could break the same-origin policy or mix
 * content and still pass); in one process, closing a test's context ends the whole browser.
 */
const DROPPED_FLAGS = new Set([
  '--disable-web-security',
  '--allow-running-insecure-content',
  '--single-process',
]);

const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

export interface BrowserSession {
  /** The test's page, in a context of its own (fresh for every test). */
  readonly page: Page;
  /** The context `page` lives in. */
  readonly context: BrowserContext;
  /**
   * Every URL a context of this test asked for that was not on 127.0.0.1/localhost; those requests
   * were aborted. A test that a page works offline asserts this is empty.
   */
  readonly blocked: string[];
  /** Another context for this test (another operator, say), with the same outside network cut. */
  newContext(): Promise<BrowserContext>;
}

/**
 * One headless Chromium for the test file (from @sparticuz/chromium, unpacked by the global setup,
 * driven by playwright-core), and for each test a new context whose requests to anywhere but this
 * machine are aborted and recorded. Pages that keep a request open (the Temporal UI) never reach network idle: wait for
 * text, not for the network.
 */
export function useBrowser(): BrowserSession {
  let browser: Browser;
  let contexts: BrowserContext[] = [];
  let page: Page | undefined;
  let blocked: string[] = [];

  async function newContext(): Promise<BrowserContext> {
    const context = await browser.newContext();
    contexts.push(context);
    await context.route('**/*', (route) => {
      const url = new URL(route.request().url());
      if ((url.protocol === 'http:' || url.protocol === 'https:') && LOCAL_HOSTS.has(url.hostname)) {
        return route.fallback();
      }
      blocked.push(url.href);
      return route.abort('internetdisconnected');
    });
    return context;
  }

  beforeAll(async () => {
    browser = await playwright.launch({
      executablePath: inject('chromiumPath'),
      args: chromium.args.filter((flag) => !DROPPED_FLAGS.has(flag)),
      headless: true,
    });
  });
  afterAll(async () => {
    await browser?.close();
  });
  beforeEach(async () => {
    blocked = [];
    page = await (await newContext()).newPage();
  });
  afterEach(async () => {
    await Promise.all(contexts.map((context) => context.close()));
    contexts = [];
    page = undefined;
  });

  return {
    get page() {
      if (!page) throw new Error('the browser page exists only inside a test');
      return page;
    },
    get context() {
      return this.page.context();
    },
    get blocked() {
      return blocked;
    },
    newContext,
  };
}

/**
 * Saves a screenshot of `page` as test-artifacts/screenshots/<name>.png, of the whole page unless
 * `fullPage: false` (the viewport only, for a page too long to look at whole); returns its path.
 */
export async function screenshot(
  page: Page,
  name: string,
  options: { fullPage?: boolean } = {},
): Promise<string> {
  const path = resolve(SCREENSHOTS_DIR, `${name}.png`);
  mkdirSync(SCREENSHOTS_DIR, { recursive: true });
  await page.screenshot({ path, fullPage: options.fullPage ?? true });
  return path;
}
