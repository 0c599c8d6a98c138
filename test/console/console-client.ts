import { closeServer, listen } from '../../api/server';
import type { ConsoleSignInSettings } from '../../console/oidc';
import type { Harness } from '../support/harness';
import { afterAll, beforeAll, expect } from 'vitest';

/** A page as a browser gets it: status, headers, the HTML, where a redirect points. */
export interface Page {
  status: number;
  headers: Headers;
  html: string;
  location: string | null;
}

/**
 * The API (and its console) listening on a real port for this file's tests; `temporalUiUrl` is the
 * Temporal UI its pages link to (none unless given). `port` (read once the file's earlier setup
 * ran) picks the port, and `host` the name the base URL gives it (a provider's redirect URL names
 * both); `signIn` how people sign in (default: an API key).
 */
export function useConsole(
  h: Harness,
  options: {
    temporalUiUrl?: string;
    port?: () => number;
    host?: string;
    signIn?: () => ConsoleSignInSettings;
  } = {},
): { readonly base: string } {
  const server = { base: '' };
  let close: () => Promise<void> = async () => {};
  beforeAll(async () => {
    const listening = await listen(
      { ...h.deps, temporalUiUrl: options.temporalUiUrl, consoleSignIn: options.signIn?.() },
      options.port?.() ?? 0,
    );
    server.base = `http://${options.host ?? '127.0.0.1'}:${listening.port}`;
    close = () => closeServer(listening.server);
  });
  afterAll(() => close());
  return server;
}

/** One browser: the console's cookie it holds, sent back on every request as a browser would. */
export class Browser {
  cookie: string | null = null;

  constructor(private readonly base: string) {}

  async get(path: string): Promise<Page> {
    return this.send(path, { method: 'GET' });
  }

  async post(path: string, fields: Record<string, string>): Promise<Page> {
    return this.send(path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
  }

  /** Signs in with `key`; the answer to the sign-in form. */
  async signIn(key: string): Promise<Page> {
    return this.post('/console/sign-in', { key });
  }

  private async send(path: string, init: RequestInit): Promise<Page> {
    const headers = new Headers(init.headers);
    if (this.cookie) headers.set('cookie', this.cookie);
    const response = await fetch(`${this.base}${path}`, { ...init, headers, redirect: 'manual' });
    const set = response.headers.get('set-cookie');
    if (set) {
      const [pair] = set.split(';');
      this.cookie = /=$/.test(pair!) || /max-age=0/i.test(set) ? null : pair!;
    }
    return {
      status: response.status,
      headers: response.headers,
      html: await response.text(),
      location: response.headers.get('location'),
    };
  }
}

/** A browser signed in to the console at `base` with `key` (the sign-in answered its redirect). */
export async function signedIn(base: string, key: string): Promise<Browser> {
  const browser = new Browser(base);
  expect((await browser.signIn(key)).status).toBe(303);
  return browser;
}

/** The CSRF token a page's forms carry. */
export function csrfOf(page: Page): string {
  const match = /name="csrf" value="([^"]+)"/.exec(page.html);
  if (!match) throw new Error(`no CSRF field in the page:\n${page.html.slice(0, 500)}`);
  return match[1]!;
}

/** A status badge (console/badge.tsx) of `kind` (`status`, `liveness`, …) that says `text`, in a page's HTML. */
export const badge = (kind: string, text: string) =>
  new RegExp(`<span class="badge \\w+" data-badge="${kind}"><svg[^]*?</svg><span>${text}</span></span>`);

/** Text as the page's HTML escapes it, unescaped. */
export const unescapeHtml = (text: string) =>
  text
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

/** The page's one-time flash as `[kind, text]` (`ok` or `error`), or undefined when it has none. */
export const flashOf = (page: Page) =>
  /<p class="flash (ok|error)"[^>]*>([^<]*)<\/p>/.exec(page.html)?.slice(1).map(unescapeHtml);
