import { describe, expect, it } from 'vitest';
import { setNode } from '../support/builders';
import { seedNode, seedPool } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { signedIn, useConsole, type Page } from './console-client';

const h = useHarness({ worker: false });
const server = useConsole(h);

/** The hostnames of the list's rows, in order. */
const hostnames = (page: Page) =>
  [...page.html.matchAll(/<td><a href="\/console\/nodes\/node_[^"]+">([^<]+)<\/a><\/td>/g)].map((m) => m[1]);

/** The address of a link by its text, as a browser would follow it. */
function linkTo(page: Page, text: string): string {
  const found = new RegExp(`<a href="([^"]+)">${text}</a>`).exec(page.html);
  if (!found) throw new Error(`no link "${text}"`);
  return found[1]!.replaceAll('&amp;', '&');
}

describe('the node list', () => {
  it('finds a node by part of its hostname and by labels; the API refusal of a filter shows in the page', async () => {
    await seedPool(h, { id: 'pool-find' });
    const wanted = await seedNode(h, {
      poolId: 'pool-find',
      hostname: 'gpu-find-me',
      labels: { rack: 'f1' },
    });
    await seedNode(h, { poolId: 'pool-find', hostname: 'gpu-other', labels: { rack: 'f2' } });
    const browser = await signedIn(server.base, h.operatorKey);
    const byName = await browser.get('/console/nodes?hostname=FIND-me');
    expect(byName.html).toContain(`href="/console/nodes/${wanted}"`);
    expect(byName.html).not.toContain('gpu-other');
    const byLabel = await browser.get(`/console/nodes?${new URLSearchParams({ selector: 'rack=f2' })}`);
    expect(hostnames(byLabel)).toEqual(['gpu-other']);
    const bad = await browser.get('/console/nodes?selector=rack');
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('is not KEY=VALUE');
  });

  it('pages 50 at a time with first, next and previous, keeping the filters and the order', async () => {
    await seedPool(h, { id: 'pool-many' });
    for (let i = 0; i < 101; i++) await seedNode(h, { poolId: 'pool-many', hostname: `many-${i}` });
    const browser = await signedIn(server.base, h.operatorKey);
    const first = await browser.get('/console/nodes?poolId=pool-many&sort=-hostname');
    expect(hostnames(first)).toHaveLength(50);
    expect(hostnames(first)[0]).toBe('many-100');
    expect(first.html).toContain('50 nodes on this page, by hostname, descending.');
    expect(first.html).not.toContain('Previous page');
    const next = linkTo(first, 'Next page');
    expect(next).toMatch(/^\/console\/nodes\?poolId=pool-many&sort=-hostname&cursor=[\w-]+$/);
    const second = await browser.get(next);
    expect(hostnames(second)[0]).toBe('many-50');
    const third = await browser.get(linkTo(second, 'Next page'));
    expect(hostnames(third)).toEqual(['many-0']);
    expect(third.html).not.toContain('Next page');
    expect(linkTo(third, 'First page')).toBe('/console/nodes?poolId=pool-many&sort=-hostname');
    const back = await browser.get(linkTo(third, 'Previous page'));
    expect(hostnames(back)).toEqual(hostnames(second));
    const backAgain = await browser.get(linkTo(back, 'Previous page'));
    expect(hostnames(backAgain)).toEqual(hostnames(first));
    expect(backAgain.html).not.toContain('Previous page');
  });

  it('sorts by a column (the whole list, in the API, not a page), says the order, and refuses an unknown sort with a 400', async () => {
    await seedPool(h, { id: 'pool-sort' });
    const h100 = await seedNode(h, {
      poolId: 'pool-sort',
      hostname: 'sort-2',
      labels: { 'gpu.model': 'H100', 'gpu.count': '8' },
    });
    const a100 = await seedNode(h, {
      poolId: 'pool-sort',
      hostname: 'sort-10',
      labels: { 'gpu.model': 'A100', 'gpu.count': '4' },
    });
    await seedNode(h, { poolId: 'pool-sort', hostname: 'sort-1' });
    await setNode(h, h100, { maintenance: true });
    await setNode(h, a100, { cordoned: true, noScheduleReasons: ['draining'] });
    const browser = await signedIn(server.base, h.operatorKey);

    const byName = await browser.get('/console/nodes?poolId=pool-sort');
    expect(hostnames(byName)).toEqual(['sort-1', 'sort-2', 'sort-10']);
    expect(byName.html).toContain(
      '<th scope="col" aria-sort="ascending"><a href="/console/nodes?poolId=pool-sort&amp;sort=-hostname">Hostname',
    );
    const byGpu = await browser.get(linkTo(byName, 'GPU'));
    expect(hostnames(byGpu)).toEqual(['sort-1', 'sort-10', 'sort-2']);
    expect(byGpu.html).toContain('<td>A100 × 4</td>');
    expect(byGpu.html).toContain('<td>H100 × 8</td>');
    expect(byGpu.html).toContain('by gpu.model.');

    const maintenance = await browser.get('/console/nodes?poolId=pool-sort&maintenance=true');
    expect(hostnames(maintenance)).toEqual(['sort-2']);
    expect(maintenance.html).toMatch(/data-badge="maintenance">.*?<span>in maintenance<\/span>/);
    const draining = await browser.get('/console/nodes?poolId=pool-sort&noScheduleReason=draining');
    expect(hostnames(draining)).toEqual(['sort-10']);
    expect(draining.html).toMatch(/data-badge="draining">.*?<span>draining<\/span>/);

    const bad = await browser.get('/console/nodes?sort=colour');
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('is one of hostname, poolId, provisionState');
    const badPage = await browser.get('/console/nodes?cursor=abc');
    expect(badPage.status).toBe(400);
    expect(badPage.html).toContain('cursor is not one this listing handed out');
  });

  it('says what to do when nothing matches, and follows the event feed', async () => {
    const browser = await signedIn(server.base, h.operatorKey);
    const none = await browser.get('/console/nodes?hostname=no-such-host');
    expect(none.status).toBe(200);
    expect(none.html).toContain(
      'No node matches these filters: widen them, or <a href="/console/nodes">clear them all</a>.',
    );
    expect(none.html).toContain('<script src="/console/assets/live.js" defer=""></script>');
    expect(none.html).toContain('id="live-nodes" data-live=""');
  });
});
