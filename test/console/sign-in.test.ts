import { describe, expect, it } from 'vitest';
import { call, seedPool, seedNode, tenantKey } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { Browser, csrfOf, useConsole } from './console-client';

const h = useHarness({ worker: false });
const server = useConsole(h);

describe('console sign-in', () => {
  it('refuses an unknown key: the form again with why, no cookie', async () => {
    const browser = new Browser(server.base);
    const page = await browser.signIn('not-a-key-anyone-has');
    expect(page.status).toBe(403);
    expect(page.headers.get('set-cookie')).toBeNull();
    expect(page.html).toContain('That key is unknown or revoked.');
    expect((await browser.get('/console')).location).toBe('/console/sign-in');
  });

  it('signs a good key in with an httpOnly, SameSite=Strict cookie on /console, then out', async () => {
    const browser = new Browser(server.base);
    const page = await browser.signIn(h.operatorKey);
    expect(page.status).toBe(303);
    expect(page.location).toBe('/console');
    const cookie = page.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^drydock_session=[A-Za-z0-9_-]{43};/);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    expect(cookie).toContain('Path=/console');
    // Plain http here; the cookie is Secure only when the request came over https.
    expect(cookie).not.toContain('Secure');
    // The key itself never goes back to the browser.
    expect(cookie).not.toContain(h.operatorKey);

    const fleet = await browser.get('/console');
    expect(fleet.status).toBe(200);
    expect(fleet.html).toContain('bootstrap-operator');
    expect(fleet.html).not.toContain(h.operatorKey);

    // Signing in again in the same browser ends the earlier session: its id is worth nothing.
    const earlier = browser.cookie!;
    expect((await browser.signIn(h.operatorKey)).status).toBe(303);
    expect(browser.cookie).not.toBe(earlier);
    const signedIn = browser.cookie!;
    const stale = new Browser(server.base);
    stale.cookie = earlier;
    expect((await stale.get('/console')).location).toBe('/console/sign-in');

    const out = await browser.post('/console/sign-out', { csrf: csrfOf(await browser.get('/console')) });
    expect(out.status).toBe(303);
    expect(out.location).toBe('/console/sign-in');
    expect(out.headers.get('set-cookie')).toMatch(/drydock_session=;.*Max-Age=0/);
    // The old session id is dead on the server too, not only forgotten by the browser.
    const replay = new Browser(server.base);
    replay.cookie = signedIn;
    expect((await replay.get('/console')).location).toBe('/console/sign-in');
  });

  it('refuses a sign-in form posted from another site, as Sec-Fetch-Site or Origin tell', async () => {
    const refused: Record<string, string>[] = [
      { 'sec-fetch-site': 'cross-site', origin: 'null' },
      { 'sec-fetch-site': 'same-site', origin: 'https://other.example' },
      { origin: 'https://evil.example' },
    ];
    for (const headers of refused) {
      const response = await fetch(`${server.base}/console/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams({ key: h.operatorKey }).toString(),
        redirect: 'manual',
      });
      expect(response.status, JSON.stringify(headers)).toBe(403);
      expect(response.headers.get('set-cookie')).toBeNull();
    }
    // A browser's own form (no-referrer pages send Origin: null) is let in.
    const own = await fetch(`${server.base}/console/sign-in`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'sec-fetch-site': 'same-origin',
        origin: 'null',
      },
      body: new URLSearchParams({ key: h.operatorKey }).toString(),
      redirect: 'manual',
    });
    expect(own.status).toBe(303);
  });

  it('refuses a tenant key without compute:nodes:read, saying why', async () => {
    await seedPool(h, { id: 'pool-signin', tenantId: 'signin' });
    const key = await tenantKey(h, 'signin', ['compute:nodes:cordon']);
    const page = await new Browser(server.base).signIn(key.secret);
    expect(page.status).toBe(403);
    expect(page.headers.get('set-cookie')).toBeNull();
    expect(page.html).toContain('this key lacks compute:nodes:read');
  });
});

describe('console pages', () => {
  it('end the session when the API no longer accepts its key (revoked)', async () => {
    await seedPool(h, { id: 'pool-revoked', tenantId: 'revoked' });
    const key = await tenantKey(h, 'revoked', ['compute:nodes:read'], 'soon-revoked');
    const browser = new Browser(server.base);
    await browser.signIn(key.secret);
    expect((await browser.get('/console')).status).toBe(200);
    expect((await call(h, 'DELETE', `/v1/keys/${key.id}`)).status).toBe(200);
    const page = await browser.get('/console');
    expect(page.status).toBe(303);
    expect(page.location).toBe('/console/sign-in');
    expect(page.headers.get('set-cookie')).toMatch(/drydock_session=;.*Max-Age=0/);
  });

  it('need a session: pages redirect to sign-in (which brings the browser back), a POST is refused', async () => {
    const nodeId = await seedNode(h, { poolId: 'pool-signin' });
    const browser = new Browser(server.base);
    expect((await browser.get('/console')).location).toBe('/console/sign-in');
    for (const path of [`/console/nodes/${nodeId}?types=node.`, '/console/no-such-page']) {
      const page = await browser.get(path);
      expect(page.status, path).toBe(303);
      expect(page.location, path).toBe(`/console/sign-in?${new URLSearchParams({ next: path }).toString()}`);
    }
    expect((await browser.post(`/console/nodes/${nodeId}/cordon`, { csrf: 'x' })).status).toBe(403);

    // The sign-in form carries the page asked for; a key signed in lands there.
    const form = await browser.get(`/console/sign-in?next=${encodeURIComponent(`/console/nodes/${nodeId}`)}`);
    expect(form.html).toContain(`name="next" value="/console/nodes/${nodeId}"`);
    const signedIn = await browser.post('/console/sign-in', {
      key: h.operatorKey,
      next: `/console/nodes/${nodeId}`,
    });
    expect(signedIn.location).toBe(`/console/nodes/${nodeId}`);
    // Only a console page of this origin: anything else lands on the fleet page.
    const elsewhere = await browser.post('/console/sign-in', {
      key: h.operatorKey,
      next: '//evil.example/console',
    });
    expect(elsewhere.location).toBe('/console');
  });

  it('carry a strict Content-Security-Policy and refuse framing and referrers', async () => {
    const browser = new Browser(server.base);
    for (const page of [await browser.get('/console/sign-in'), await browser.signIn('wrong')]) {
      const csp = page.headers.get('content-security-policy')!;
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(page.headers.get('x-frame-options')).toBe('DENY');
      expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    }
    // Nothing on a page comes from anywhere else: no absolute URLs, no inline script or style
    // (the one script is the console's own asset).
    await browser.signIn(h.operatorKey);
    for (const path of ['/console', '/console/nodes']) {
      const page = await browser.get(path);
      expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(page.html).not.toMatch(/(src|href)="(https?:)?\/\//);
      expect(page.html).not.toMatch(/<script(?! src="\/console\/assets\/live\.js")|<style|style="/);
      expect(page.html).toContain('<script src="/console/assets/live.js"');
    }
    // Every answer carries them, not only pages: an asset, a redirect, a page not found, a refusal.
    const signedOut = new Browser(server.base);
    for (const path of ['/console/assets/console.css', '/console/nodes', '/console/no-such-page']) {
      for (const reply of [await browser.get(path), await signedOut.get(path)]) {
        expect(reply.headers.get('content-security-policy'), path).toContain("default-src 'self'");
        expect(reply.headers.get('cache-control'), path).toBe('no-store');
      }
    }
  });

  it('answer 404, never 500, for bad ids, unknown nodes and unknown pages', async () => {
    const browser = new Browser(server.base);
    await browser.signIn(h.operatorKey);
    const csrf = csrfOf(await browser.get('/console'));
    const cases: [string, Promise<{ status: number; html: string }>][] = [
      ['malformed id', browser.get('/console/nodes/not-a-node')],
      ['unknown node', browser.get('/console/nodes/node_01k5w8v3x9q2m4n6p8r0s2t4v6')],
      ['unknown page', browser.get('/console/nowhere')],
      ['control of a malformed id', browser.post('/console/nodes/%00/cordon', { csrf })],
      ['unknown control', browser.post('/console/nodes/node_01k5w8v3x9q2m4n6p8r0s2t4v6/explode', { csrf })],
    ];
    for (const [name, reply] of cases) {
      const page = await reply;
      expect(page.status, name).toBe(404);
      expect(page.html, name).toContain('Not found');
    }
  });

  it('show the API refusal of a bad filter in the page (400, not 500)', async () => {
    const browser = new Browser(server.base);
    await browser.signIn(h.operatorKey);
    const page = await browser.get('/console/nodes?liveness=sleepy');
    expect(page.status).toBe(400);
    expect(page.html).toContain('INVALID_INPUT');
    expect(page.html).toContain('liveness');
  });
});
