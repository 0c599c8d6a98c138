import { beforeAll, describe, expect, it } from 'vitest';
import { setNode } from '../support/builders';
import { allocate, call, seedNode, seedPool, tenantKey } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { signedIn, useConsole, type Page } from './console-client';

const h = useHarness({ worker: false });
const server = useConsole(h);

/** The seeded fleet's node ids by hostname. */
const ids: Record<string, string> = {};

beforeAll(async () => {
  await seedPool(h, { id: 'pool-ov-a', tenantId: 'ov-acme' });
  await seedPool(h, { id: 'pool-ov-b', tenantId: 'ov-other' });
  const seed = async (hostname: string, poolId: string, labels: Record<string, string> = {}) =>
    (ids[hostname] = await seedNode(h, { poolId, hostname, labels }));
  await seed('ov-a1', 'pool-ov-a', { rack: 'r1', 'gpu.model': 'H100', 'gpu.count': '8' });
  await seed('ov-a2', 'pool-ov-a', { rack: 'r1' });
  await seed('ov-a3', 'pool-ov-a', { rack: 'r1' });
  await seed('ov-a4', 'pool-ov-a', { rack: 'r10' });
  await seed('ov-a5', 'pool-ov-a', { rack: 'r2' });
  await seed('ov-a6', 'pool-ov-a');
  await seed('ov-b1', 'pool-ov-b', { rack: 'r2' });
  ids['ov-b2'] = await seedNode(h, { poolId: 'pool-ov-b', hostname: 'ov-b2', provisionState: 'pending' });
  // As a machine that joined without a token asking for a pool: in none yet, the one it asked kept.
  await setNode(h, ids['ov-b2']!, { poolId: null, tenantId: null, requestedPoolId: 'pool-ov-b' });
  await setNode(h, ids['ov-a2']!, { liveness: 'lost' });
  await setNode(h, ids['ov-a3']!, { cordoned: true });
  await setNode(h, ids['ov-a5']!, { maintenance: true });
  await setNode(h, ids['ov-a6']!, { liveness: 'unreachable' });
  await setNode(h, ids['ov-b1']!, { noScheduleReasons: ['quarantined'] });
  // A drain that no worker takes: its node is cordoned and draining, the operation stays open.
  await allocate(h, ids['ov-a4']!, 'ov-acme');
  const drain = await call(h, 'POST', `/v1/nodes/${ids['ov-a4']}/drain`, { body: { reason: 'fan swap' } });
  expect(drain.status).toBe(202);
});

/** Each state count of the overview with the address it links to. */
function counts(page: Page): Record<string, { count: number; href: string }> {
  const found: Record<string, { count: number; href: string }> = {};
  for (const [, href, count, name] of page.html.matchAll(
    /<a href="([^"]+)"><span class="count">(\d+)<\/span> ([a-z ]+)<\/a>/g,
  )) {
    found[name!] = { count: Number(count), href: href!.replaceAll('&amp;', '&') };
  }
  return found;
}

/** The rack map's groups in order: each heading with its tiles' accessible names. */
function rackMap(page: Page): { heading: string; tiles: string[] }[] {
  return page.html
    .split('<section class="rack"')
    .slice(1)
    .map((section) => ({
      heading: /<h3>([^<]+)<\/h3>/.exec(section)![1]!,
      tiles: [...section.matchAll(/<a class="tile state-([a-z]+)" href="[^"]+" aria-label="([^"]+)"/g)].map(
        ([, state, name]) => `${name} [${state}]`,
      ),
    }));
}

/** The node links of a page of the node list. */
const listed = (page: Page) =>
  [...page.html.matchAll(/<a href="\/console\/nodes\/(node_[^"]+)">/g)].map((m) => m[1]);

describe('the fleet overview', () => {
  it('counts the nodes in each state, each count a link to the node list filtered to exactly those', async () => {
    const browser = await signedIn(server.base, h.operatorKey);
    const page = await browser.get('/console');
    expect(page.status).toBe(200);
    expect(page.html).toContain('<h1>Fleet overview</h1>');
    const found = counts(page);
    expect(Object.fromEntries(Object.entries(found).map(([name, { count }]) => [name, count]))).toEqual({
      alive: 6,
      unreachable: 1,
      lost: 1,
      cordoned: 2,
      draining: 1,
      maintenance: 1,
      quarantined: 1,
      'pending approval': 1,
    });
    expect(found.draining!.href).toBe('/console/nodes?noScheduleReason=draining');
    expect(found.maintenance!.href).toBe('/console/nodes?maintenance=true');
    expect(found['pending approval']!.href).toBe('/console/nodes?provisionState=pending');
    for (const [name, { count, href }] of Object.entries(found)) {
      const list = await browser.get(href);
      expect({ name, status: list.status, rows: listed(list).length }).toEqual({
        name,
        status: 200,
        rows: count,
      });
    }
    const lost = await browser.get(found.lost!.href);
    expect(listed(lost)).toEqual([ids['ov-a2']]);
  });

  it('draws capacity per pool as stacked bars with titles, a legend and the numbers in a table', async () => {
    const browser = await signedIn(server.base, h.operatorKey);
    const page = await browser.get('/console');
    const capacity = (await call(h, 'GET', '/v1/pools/pool-ov-a/capacity')).body;
    const words = ['schedulable', 'cordoned', 'unhealthy', 'maintenance', 'unreachable']
      .map((bucket) => `${capacity.buckets[bucket]} ${bucket}`)
      .join(', ');
    expect(page.html).toContain(`<title>pool-ov-a: ${capacity.total} nodes — ${words}</title>`);
    expect(page.html).toContain(`<title>${capacity.buckets.unreachable} unreachable</title>`);
    expect(page.html).toMatch(/<ul class="legend" aria-label="Capacity buckets">/);
    // No inline style anywhere (the CSP allows none): colours are SVG presentation attributes.
    expect(page.html).not.toMatch(/style=/);
    expect(page.headers.get('content-security-policy')).toContain("style-src 'self'");
  });

  it('lists the open operations by kind, oldest first, by hostname', async () => {
    const browser = await signedIn(server.base, h.operatorKey);
    const page = await browser.get('/console');
    const section = page.html.slice(page.html.indexOf('Running operations'), page.html.indexOf('Rack map'));
    expect(section).toMatch(/<h3>drain \(1\)<\/h3>/);
    expect(section).toContain(`<a href="/console/nodes/${ids['ov-a4']}">ov-a4</a>`);
  });

  it('groups the rack map by rack: values in order, the nodes without one last, one tile per node with its state', async () => {
    const browser = await signedIn(server.base, h.operatorKey);
    const page = await browser.get('/console');
    expect(rackMap(page)).toEqual([
      {
        heading: 'rack r1',
        tiles: ['ov-a1: schedulable [schedulable]', 'ov-a2: lost [lost]', 'ov-a3: cordoned [cordoned]'],
      },
      { heading: 'rack r2', tiles: ['ov-a5: maintenance [maintenance]', 'ov-b1: quarantined [quarantined]'] },
      { heading: 'rack r10', tiles: ['ov-a4: draining [draining]'] },
      { heading: '(no rack)', tiles: ['ov-a6: unreachable [unreachable]', 'ov-b2: pending [pending]'] },
    ]);
    expect(page.html).toContain(
      `href="/console/nodes/${ids['ov-a2']}" aria-label="ov-a2: lost" title="ov-a2 — lost (pool-ov-a)"`,
    );
    expect(page.html).toContain('3 nodes: 1 lost, 1 cordoned, 1 schedulable');
  });

  it('groups by another label with groupBy; a label no node carries says so; a bad one is a 400 with the reason', async () => {
    const browser = await signedIn(server.base, h.operatorKey);
    const byModel = await browser.get('/console?groupBy=gpu.model');
    expect(rackMap(byModel).map((g) => [g.heading, g.tiles.length])).toEqual([
      ['gpu.model H100', 1],
      ['(no gpu.model)', 7],
    ]);
    expect(byModel.html).toContain('<option value="gpu.model" selected="">gpu.model</option>');

    const none = await browser.get('/console?groupBy=row');
    expect(none.status).toBe(200);
    expect(none.html).toContain('No node carries the label <code>row</code>');
    expect(rackMap(none).map((g) => [g.heading, g.tiles.length])).toEqual([['(no row)', 8]]);

    const bad = await browser.get(`/console?${new URLSearchParams({ groupBy: 'rack name!' })}`);
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('groupBy must be a label key');
    expect(bad.html).toContain('&quot;rack name!&quot; is not one.');
  });

  it('lists the nodes waiting for approval with the pool each asked for, chosen in its Approve form', async () => {
    const browser = await signedIn(server.base, h.operatorKey);
    const page = await browser.get('/console');
    const pending = page.html.slice(page.html.indexOf('<h2>Waiting for approval</h2>'));
    expect(pending).toMatch(/<td>ov-b2<\/td>.*?<td>pool-ov-b<\/td>/s);
    expect(pending).toContain('<option value="pool-ov-a">pool-ov-a</option>');
    expect(pending).toContain('<option value="pool-ov-b" selected="">pool-ov-b</option>');
  });

  it('shows a tenant only its own nodes: counts, capacity and rack map', async () => {
    const key = await tenantKey(h, 'ov-acme', ['compute:nodes:read'], 'ov-reader');
    const browser = await signedIn(server.base, key.secret);
    const page = await browser.get('/console');
    expect(page.status).toBe(200);
    expect(counts(page).alive!.count).toBe(4);
    expect(counts(page).quarantined!.count).toBe(0);
    expect(counts(page)['pending approval']!.count).toBe(0);
    expect(rackMap(page).flatMap((g) => g.tiles.map((t) => t.split(':')[0]))).toEqual([
      'ov-a1',
      'ov-a2',
      'ov-a3',
      'ov-a5',
      'ov-a4',
      'ov-a6',
    ]);
    expect(page.html).not.toContain('ov-b1');
    expect(page.html).not.toContain('pool-ov-b');
  });
});
