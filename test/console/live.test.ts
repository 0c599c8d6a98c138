import { describe, expect, it } from 'vitest';
import { call, seedNode, seedPool, tenantKey } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { Browser, csrfOf, useConsole, signedIn as signedInAs } from './console-client';

const h = useHarness({ worker: false });
const server = useConsole(h);

interface Answer {
  after: string;
  changed: boolean;
}

/** One live request as the page's script makes it; its status, its JSON and how long it took. */
async function live(browser: Browser, query: Record<string, string>) {
  const started = Date.now();
  const page = await browser.get(`/console/live?${new URLSearchParams(query)}`);
  expect(page.headers.get('content-type')).toMatch(/^application\/json/);
  return { status: page.status, body: JSON.parse(page.html) as Answer, ms: Date.now() - started };
}

const cordon = async (nodeId: string, reason: string) =>
  expect((await call(h, 'POST', `/v1/nodes/${nodeId}/cordon`, { body: { reason } })).status).toBe(200);

const signedIn = (key = h.operatorKey) => signedInAs(server.base, key);

describe('the console live endpoint', () => {
  it("answers changed after an event of the watched node, woken at once, and not for another node's", async () => {
    await seedPool(h, { id: 'pool-live' });
    const watched = await seedNode(h, { poolId: 'pool-live', hostname: 'gpu-live-1' });
    const other = await seedNode(h, { poolId: 'pool-live', hostname: 'gpu-live-2' });
    const browser = await signedIn();

    // Without a cursor: the feed's cursor of now, at once, nothing changed.
    const start = await live(browser, { nodeId: watched });
    expect(start.status).toBe(200);
    expect(start.body).toEqual({ after: expect.stringMatching(/^\d+$/), changed: false });

    // Another node's event does not count; a busy page's wait still ends after a few seconds.
    const quiet = live(browser, { nodeId: watched, after: start.body.after, busy: '1' });
    await cordon(other, 'not the watched node');
    const notChanged = await quiet;
    expect(notChanged.body.changed).toBe(false);
    expect(notChanged.ms).toBeGreaterThanOrEqual(2_500);
    expect(notChanged.ms).toBeLessThan(10_000);

    // The watched node's event ends the (25 s) wait at once.
    const waiting = live(browser, { nodeId: watched, after: notChanged.body.after });
    await eventually(async () => h.deps.feedWakeups.waiting('') > 0); // it waits on the feed
    await cordon(watched, 'the watched node');
    const changed = await waiting;
    expect(changed.body.changed).toBe(true);
    expect(changed.ms).toBeLessThan(10_000);
    expect(Number(changed.body.after)).toBeGreaterThan(Number(notChanged.body.after));

    // From the cursor it handed out, that event is not news again.
    const again = await live(browser, { nodeId: watched, after: changed.body.after, busy: '1' });
    expect(again.body).toEqual({ after: changed.body.after, changed: false });
  });

  it('a page that goes away ends its wait on the feed', async () => {
    const browser = await signedIn();
    const { body: start } = await live(browser, {});
    const leaving = new AbortController();
    const request = fetch(`${server.base}/console/live?after=${start.after}`, {
      headers: { cookie: browser.cookie! },
      signal: leaving.signal,
    }).catch((error: Error) => error.name);
    await eventually(async () => h.deps.feedWakeups.waiting('') > 0);
    const left = Date.now();
    leaving.abort();
    expect(await request).toBe('AbortError');
    await eventually(async () => h.deps.feedWakeups.waiting('') === 0);
    expect(Date.now() - left).toBeLessThan(5_000);
  });

  it('a tenant key watching everything it sees is woken by its own node, not by another tenant’s', async () => {
    await seedPool(h, { id: 'pool-live-acme', tenantId: 'acme' });
    await seedPool(h, { id: 'pool-live-globex', tenantId: 'globex' });
    const own = await seedNode(h, { poolId: 'pool-live-acme', tenantId: 'acme' });
    const foreign = await seedNode(h, { poolId: 'pool-live-globex', tenantId: 'globex' });
    const key = await tenantKey(h, 'acme', ['compute:nodes:read']);
    const browser = await signedIn(key.secret);

    const start = await live(browser, {});
    await cordon(foreign, 'globex maintenance');
    const unseen = await live(browser, { after: start.body.after, busy: '1' });
    expect(unseen.body.changed).toBe(false);
    await cordon(own, 'acme maintenance');
    const seen = await live(browser, { after: unseen.body.after, busy: '1' });
    expect(seen.body.changed).toBe(true);
  });

  it('without a session: to the sign-in page, never an answer or a 500', async () => {
    const stranger = new Browser(server.base);
    for (const path of ['/console/live', '/console/live?after=0']) {
      const page = await stranger.get(path);
      expect(page.status, path).toBe(303);
      expect(page.location, path).toBe('/console/sign-in');
    }
    // The script is an asset like the stylesheet: loading it neither needs nor renews a session
    // (a person's session whose renewal the script's load met ended with nobody told why).
    const script = await stranger.get('/console/assets/live.js');
    expect(script.status).toBe(200);
    expect(script.headers.get('set-cookie')).toBeNull();
    // A session signed out since is the same.
    const browser = await signedIn();
    const cookie = browser.cookie!;
    await browser.post('/console/sign-out', { csrf: csrfOf(await browser.get('/console')) });
    const ended = await fetch(`${server.base}/console/live?after=0`, {
      headers: { cookie },
      redirect: 'manual',
    });
    expect(ended.status).toBe(303);
    expect(ended.headers.get('location')).toBe('/console/sign-in');
  });

  it('bad query values are a 400 with a message and code, never a 500', async () => {
    const browser = await signedIn();
    for (const query of <Record<string, string>[]>[
      { nodeId: 'not-a-node' },
      { nodeId: 'node_x' },
      { after: 'abc' },
      { after: '-1' },
      { after: '1234567890123456' },
      { after: '0', busy: 'yes' },
    ]) {
      const page = await browser.get(`/console/live?${new URLSearchParams(query)}`);
      expect(page.status, JSON.stringify(query)).toBe(400);
      const body = JSON.parse(page.html);
      expect(body.error.code).toBe('INVALID_INPUT');
      expect(body.error.message).toMatch(/nodeId|after|busy/);
      // The API's envelope, with the request id the answer's header carries.
      expect(body.error.requestId).toBe(page.headers.get('x-request-id'));
      expect(body.error.details).toEqual({});
    }
  });

  it('a background re-read of a page does not take its one-time flash', async () => {
    await seedPool(h, { id: 'pool-live-flash' });
    const nodeId = await seedNode(h, { poolId: 'pool-live-flash', hostname: 'gpu-live-flash' });
    const browser = await signedIn();
    const page = await browser.get(`/console/nodes/${nodeId}`);
    // The page is live: it watches its node and loads the script; the script is this origin's.
    expect(page.html).toContain(`data-watch="nodeId=${nodeId}"`);
    expect(page.html).toContain('<script src="/console/assets/live.js" defer=""></script>');
    const script = await browser.get('/console/assets/live.js');
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(script.headers.get('cache-control')).toBe('no-store');
    expect(script.html).toContain('/console/live?');

    const node = (await call(h, 'GET', `/v1/nodes/${nodeId}`)).body;
    const done = await browser.post(`/console/nodes/${nodeId}/cordon`, {
      csrf: csrfOf(page),
      version: String(node.version),
      reason: '',
    });
    expect(done.status).toBe(303);
    const flash = 'gpu-live-flash cordoned.';
    // The live script's re-read (its header) comes first, as it can from another tab...
    const background = await fetch(`${server.base}/console/nodes/${nodeId}`, {
      headers: { cookie: browser.cookie!, 'x-drydock-live': '1' },
    });
    expect(background.status).toBe(200);
    expect(await background.text()).toContain('cordoned');
    // ...and the page the user is sent to still shows the flash, once.
    expect((await browser.get(done.location!)).html).toContain(flash);
    expect((await browser.get(done.location!)).html).not.toContain(flash);
  });

  it('pages that watch nothing load no script', async () => {
    const browser = await signedIn();
    const signIn = await new Browser(server.base).get('/console/sign-in');
    expect(signIn.html).not.toContain('live.js');
    const missing = await browser.get('/console/nodes/node_nope');
    expect(missing.status).toBe(404);
    expect(missing.html).not.toContain('live.js');
  });
});
