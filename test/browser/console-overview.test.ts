import { describe, expect, it } from 'vitest';
import { setNode } from '../support/builders';
import { seedNode, seedPool } from '../support/fixtures';
import { screenshot, useBrowser } from '../support/browser';
import { useHarness } from '../support/harness';
import { useConsole } from '../console/console-client';

const h = useHarness({ worker: false });
const server = useConsole(h);
const b = useBrowser();

describe('the fleet overview in a browser', () => {
  it('reaches a rack map tile by keyboard and opens its node, by Enter and by a click', async () => {
    await seedPool(h, { id: 'pool-map', tenantId: 'acme' });
    const first = await seedNode(h, { poolId: 'pool-map', hostname: 'gpu-b7-01', labels: { rack: 'b7' } });
    const lost = await seedNode(h, { poolId: 'pool-map', hostname: 'gpu-b7-02', labels: { rack: 'b7' } });
    await seedNode(h, { poolId: 'pool-map', hostname: 'gpu-b8-01', labels: { rack: 'b8' } });
    await setNode(h, lost, { liveness: 'lost' });
    const page = b.page;
    await page.goto(`${server.base}/console/sign-in`);
    await page.getByLabel('API key').fill(h.operatorKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Fleet overview' }).waitFor();
    await screenshot(page, 'console-rack-map');

    const rack = page.getByRole('region', { name: 'rack b7' });
    const tile = rack.getByRole('link', { name: 'gpu-b7-01: schedulable' });
    expect(await tile.getAttribute('title')).toBe('gpu-b7-01 — schedulable (pool-map)');
    // Tab moves from one tile to the next: each is in the page's tab order.
    await tile.focus();
    await page.keyboard.press('Tab');
    const focused = page.locator(':focus');
    expect(await focused.getAttribute('aria-label')).toBe('gpu-b7-02: lost');
    expect(await focused.evaluate((el) => el.matches(':focus-visible'))).toBe(true);
    await page.keyboard.press('Enter');
    await page.waitForURL(`${server.base}/console/nodes/${lost}`);
    await page.getByRole('heading', { name: /gpu-b7-02/ }).waitFor();

    await page.goBack();
    await page.getByRole('link', { name: 'gpu-b7-01: schedulable' }).click();
    await page.waitForURL(`${server.base}/console/nodes/${first}`);
    await page.getByRole('heading', { name: /gpu-b7-01/ }).waitFor();
    expect(b.blocked).toEqual([]);
  });

  it('paints the overview and a node page first within a few seconds (first contentful paint, measured)', async () => {
    await seedPool(h, { id: 'pool-paint', tenantId: 'acme' });
    const nodeId = await seedNode(h, {
      poolId: 'pool-paint',
      hostname: 'gpu-paint-01',
      labels: { rack: 'p1' },
    });
    const page = b.page;
    await page.goto(`${server.base}/console/sign-in`);
    await page.getByLabel('API key').fill(h.operatorKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Fleet overview' }).waitFor();
    /** The page's first contentful paint in ms from its navigation, once the browser recorded it. */
    const firstPaint = async (path: string, heading: RegExp | string) => {
      await page.goto(`${server.base}${path}`);
      await page.getByRole('heading', { name: heading }).first().waitFor();
      await page.waitForFunction(
        () =>
          (globalThis as unknown as Paints).performance.getEntriesByName('first-contentful-paint').length > 0,
      );
      return page.evaluate(
        () =>
          (globalThis as unknown as Paints).performance.getEntriesByName('first-contentful-paint')[0]!
            .startTime,
      );
    };
    const overview = await firstPaint('/console', 'Fleet overview');
    const node = await firstPaint(`/console/nodes/${nodeId}`, /gpu-paint-01/);
    console.log(
      `first contentful paint: overview ${overview.toFixed(0)} ms, node page ${node.toFixed(0)} ms`,
    );
    // Generous: a shared CI machine; a local run paints in well under a second.
    for (const [name, ms] of [
      ['overview', overview],
      ['node', node],
    ] as const) {
      expect({ name, positive: ms > 0, under: ms < 5_000 }).toEqual({ name, positive: true, under: true });
    }
  });
});

/** What the test reads of the browser's Performance API (the tsconfig has no DOM types). */
type Paints = { performance: { getEntriesByName(name: string): { startTime: number }[] } };
