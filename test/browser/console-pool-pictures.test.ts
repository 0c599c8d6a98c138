import { describe, expect, it } from 'vitest';
import { recordCapacity } from '../../db/capacity-history';
import { allocate, call, seedNode, seedPool } from '../support/fixtures';
import { screenshot, useBrowser } from '../support/browser';
import { useHarness } from '../support/harness';
import { useConsole } from '../console/console-client';

const h = useHarness();
const server = useConsole(h);
const b = useBrowser();

describe("a pool's pictures in a browser", () => {
  it('draws the capacity over time and the pool drain node by node, within the CSP', async () => {
    await seedPool(h, { id: 'pool-h100-east', tenantId: 'acme', policy: { maxUnavailable: 1 } });
    const nodes: string[] = [];
    for (const hostname of ['gpu-b7-01', 'gpu-b7-02', 'gpu-b7-03', 'gpu-b7-04']) {
      const nodeId = await seedNode(h, { poolId: 'pool-h100-east', tenantId: 'acme', hostname });
      await allocate(h, nodeId, 'acme');
      nodes.push(nodeId);
    }
    // A day of history: every 10 minutes, one node more cordoned for a while in the afternoon.
    const now = Date.now();
    for (let minutes = 24 * 60; minutes > 0; minutes -= 10) {
      if (minutes === 300) await call(h, 'POST', `/v1/nodes/${nodes[3]}/cordon`, { body: {} });
      if (minutes === 200) await call(h, 'POST', `/v1/nodes/${nodes[3]}/uncordon`, { body: {} });
      await recordCapacity(h.db, new Date(now - minutes * 60_000), 30);
    }
    const started = await call(h, 'POST', '/v1/pools/pool-h100-east/drain', {
      body: { reason: 'firmware', maxConcurrent: 2, deadline: '0s' },
    });
    expect(started.status).toBe(202);

    const page = b.page;
    const refused: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) refused.push(message.text());
    });
    await page.goto(`${server.base}/console`);
    await page.getByLabel('API key').fill(h.operatorKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.goto(`${server.base}/console/pools/pool-h100-east`);
    const day = page.getByRole('img', { name: /Capacity of pool pool-h100-east, last 24 hours/ });
    await day.waitFor();
    // Measured in one turn of the page's script, the drawing found there: the live region may
    // replace it between a locator's finding and its evaluating (a detached one measures 0).
    const sizeOf = (title: string) =>
      page.locator('main').evaluate((main, wanted) => {
        const drawing = [...main.querySelectorAll('svg')].find((svg) =>
          svg.querySelector('title')?.textContent?.startsWith(wanted),
        );
        const box = drawing?.getBoundingClientRect();
        return { width: box?.width ?? 0, height: box?.height ?? 0 };
      }, title);
    expect((await sizeOf('Capacity of pool pool-h100-east, last 24 hours')).width).toBeGreaterThan(300);
    // The live region brings the waiting node's bar in without a reload.
    await page.locator('rect[data-state="waiting-for-budget"]').first().waitFor({ timeout: 20_000 });
    const gantt = page.getByRole('group', { name: /Pool drain op_\w+, node by node/ });
    expect((await sizeOf('Pool drain op_')).height).toBeGreaterThan(60);
    await page.locator('#live-pool-capacity').scrollIntoViewIfNeeded();
    await screenshot(page, 'console-pool-capacity', { fullPage: false });
    await gantt.scrollIntoViewIfNeeded();
    await screenshot(page, 'console-pool-drain-gantt', { fullPage: false });
    expect(refused).toEqual([]);

    await call(h, 'DELETE', `/v1/operations/${started.body.operation.id}`, { body: { children: 'cancel' } });
  }, 60_000);
});
