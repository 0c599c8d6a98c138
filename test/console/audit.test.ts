import { describe, expect, it } from 'vitest';
import { appendEvent } from '../../db/events';
import { seedPoolNode } from '../support/builders';
import { call, tenantKey } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { signedIn as signIn, useConsole } from './console-client';

const h = useHarness({ worker: false });
const server = useConsole(h);

const signedIn = (key: string) => signIn(server.base, key);

describe('audit page', () => {
  it('lists who did what, newest first, escaped, filtered by the query string, with Older paging', async () => {
    const node = await seedPoolNode(h, 'pool-audit');
    const hostname: string = (await call(h, 'GET', `/v1/nodes/${node}`)).body.hostname;
    const record = (actor: string, reason: string) =>
      h.db.transaction((tx) => appendEvent(tx, { type: 'node.cordoned', nodeId: node, actor, reason }));
    await record('user:carol@example.com', 'first');
    await record('user:carol@example.com', 'PSU <script>alert(1)</script> & swap');
    await record('key:ops', 'not carol');
    const browser = await signedIn(h.operatorKey);

    const page = await browser.get('/console/audit?actor=carol%40example.com&type=node.&since=24h');
    expect(page.status).toBe(200);
    expect(page.html).toContain('<a href="/console/audit">Audit</a>');
    // The filters stay in the form, as the query string had them.
    expect(page.html).toContain('value="carol@example.com"');
    expect(page.html).toContain('value="24h"');
    expect(page.html).toContain('PSU &lt;script&gt;alert(1)&lt;/script&gt; &amp; swap');
    expect(page.html).not.toContain('<script>alert(1)');
    expect(page.html).not.toContain('not carol');
    expect(page.html).toContain(`<a href="/console/nodes/${node}">${hostname}</a>`);
    expect(page.html.indexOf('PSU &lt;script')).toBeLessThan(page.html.indexOf('first'));

    // 50 a page: the 51st, the oldest, is on the page the Older link leads to.
    for (let i = 0; i < 51; i++) await record('user:dave@example.com', `dave ${i}.`);
    const newest = await browser.get('/console/audit?actor=dave%40example.com');
    expect(newest.html).toContain('dave 50.');
    expect(newest.html).not.toContain('dave 0.');
    const older = /<a href="(\/console\/audit\?[^"]+)">Older entries<\/a>/.exec(newest.html)![1]!;
    expect(older).toMatch(/actor=dave%40example\.com&amp;cursor=\d+/);
    const last = await browser.get(older.replaceAll('&amp;', '&'));
    expect(last.html).toContain('dave 0.');
    expect(last.html).not.toContain('dave 1.');
    expect(last.html).not.toContain('Older entries');

    const none = await browser.get('/console/audit?actor=nobody%40example.com');
    expect(none.html).toContain('No entries match these filters');
    const bad = await browser.get('/console/audit?since=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('INVALID_INPUT');
  });

  it('is refused to a tenant session, and its nav has no Audit link', async () => {
    const key = await tenantKey(h, 'acme', ['compute:nodes:read']);
    const browser = await signedIn(key.secret);
    const page = await browser.get('/console/audit');
    expect(page.status).toBe(403);
    expect(page.html).toContain('FORBIDDEN');
    expect(page.html).not.toContain('href="/console/audit"');
  });
});
