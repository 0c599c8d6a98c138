import { describe, expect, it } from 'vitest';
import { allocate, call, eventsOf, seedNode, seedPool } from '../support/fixtures';
import { screenshot, useBrowser } from '../support/browser';
import { useHarness } from '../support/harness';
import { useConsole } from '../console/console-client';

const h = useHarness();
const server = useConsole(h);
const b = useBrowser();

/** How long a live page may take to show a change (a busy page is read again every 3 s). */
const LIVE = { timeout: 20_000 };

describe('live updates of the node page, in a browser', () => {
  it('follows a drain from 2 live allocations to drained without a reload', async () => {
    await seedPool(h, { id: 'pool-live-browser', tenantId: 'acme' });
    const nodeId = await seedNode(h, {
      poolId: 'pool-live-browser',
      tenantId: 'acme',
      hostname: 'gpu-live-07',
    });
    const allocations = [await allocate(h, nodeId, 'acme'), await allocate(h, nodeId, 'acme')];
    const page = b.page;
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));

    await page.goto(`${server.base}/console/nodes/${nodeId}`);
    await page.getByLabel('API key').fill(h.operatorKey);
    // Signing in brings the browser back to the node page it asked for.
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: /gpu-live-07/ }).waitFor();

    // The drain's page, from the Actions menu; its form sends the browser back to the node page.
    await page.getByText('Actions', { exact: true }).click();
    await page.getByRole('link', { name: 'Drain…' }).click();
    await page.getByRole('heading', { name: 'Drain gpu-live-07' }).waitFor();
    await page.getByLabel('Deadline').fill('2h');
    await page.getByLabel('Reason').fill('swap the PSU');
    await page.getByRole('button', { name: 'Drain gpu-live-07' }).click();
    await page.getByText(/^gpu-live-07: drain requested as operation op_/).waitFor();

    const operations = page.locator('#live-operations');
    const noSchedule = page.locator('[data-axis="NoSchedule"] .value');
    const status = page.locator('.live-status');
    // From here on the page is never reloaded: this survives only in the same document.
    await page.evaluate(() => {
      (globalThis as unknown as { liveMarker: string }).liveMarker = 'same document';
    });
    await operations.getByText('Waiting for 2 live allocations').waitFor(LIVE);
    expect(await noSchedule.textContent()).toContain('draining');
    // A running operation's progress moves without events: the region says so.
    expect(await operations.getAttribute('data-live-busy')).toBe('');
    await status.getByText('live', { exact: true }).waitFor(LIVE);
    // What the user typed into a live region's form (not focused any more) outlives its updates.
    const labelForm = page.locator('#live-labels form', {
      has: page.getByRole('button', { name: 'Set label' }),
    });
    await labelForm.getByPlaceholder('key', { exact: true }).fill('half-typed');
    // The Actions menu, opened, stays open through the updates of its region.
    const menu = page.locator('#live-controls details.menu');
    await menu.locator('summary').click();
    expect(await menu.getByRole('link', { name: 'Drain…' }).count()).toBe(0);
    await page.locator('h1').click();

    expect((await call(h, 'POST', `/v1/allocations/${allocations[0]}/release`)).status).toBe(200);
    await operations.getByText(/^Waiting for 1 live allocation /).waitFor(LIVE);
    expect(await operations.textContent()).not.toContain('Waiting for 2');

    expect((await call(h, 'POST', `/v1/allocations/${allocations[1]}/release`)).status).toBe(200);
    // Drained, the drain stays in the timeline, ended.
    await operations
      .locator('[data-status="succeeded"]')
      .getByText('Drained: the node holds nothing live.')
      .waitFor(LIVE);
    expect(await operations.getAttribute('data-live-busy')).toBeNull();
    await page.locator('#live-events').getByRole('cell', { name: 'node.drained', exact: true }).waitFor(LIVE);
    await noSchedule.filter({ hasNotText: 'draining' }).waitFor(LIVE);
    expect(await noSchedule.textContent()).not.toContain('draining');

    // All of it in the first document, with the user's typing intact and the indicator on.
    expect(await page.evaluate(() => (globalThis as unknown as { liveMarker?: string }).liveMarker)).toBe(
      'same document',
    );
    expect(await labelForm.getByPlaceholder('key', { exact: true }).inputValue()).toBe('half-typed');
    // Drained, the menu offers a drain again, and is still open.
    await menu.getByRole('link', { name: 'Drain…' }).waitFor(LIVE);
    expect(await menu.getAttribute('open')).toBe('');
    expect(await status.textContent()).toBe('live');
    await page.locator('#live-allocations').getByText('No live allocations.').waitFor(LIVE);
    const node = (await call(h, 'GET', `/v1/nodes/${nodeId}`)).body;
    expect(await page.locator('#live-summary').textContent()).toContain(`version ${node.version}`);
    expect(await labelForm.locator('input[name="version"]').inputValue()).toBe(String(node.version));
    await screenshot(page, 'console-node-live');

    // What the page showed is what happened.
    expect(await eventsOf(h, nodeId, 'node.drained')).toHaveLength(1);
    const [drain] = (await call(h, 'GET', `/v1/operations?nodeId=${nodeId}&kind=drain`)).body.items;
    expect(drain.status).toBe('succeeded');
    expect(errors).toEqual([]);
    expect(b.blocked).toEqual([]);
  });

  it('says "signed out" when the session ends, and stops asking', async () => {
    await seedPool(h, { id: 'pool-live-signout' });
    const nodeId = await seedNode(h, { poolId: 'pool-live-signout', hostname: 'gpu-live-08' });
    const page = b.page;
    await page.goto(`${server.base}/console/sign-in`);
    await page.getByLabel('API key').fill(h.operatorKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Fleet' }).waitFor();
    await page.goto(`${server.base}/console/nodes/${nodeId}`);
    await page.locator('.live-status').getByText('live', { exact: true }).waitFor(LIVE);

    // Signed out in another tab of the same browser.
    const other = await page.context().newPage();
    await other.goto(`${server.base}/console/nodes/${nodeId}`);
    await other.getByRole('button', { name: 'Sign out' }).click();
    await other.getByLabel('API key').waitFor();

    // The next event ends the first tab's long-poll: it finds the session gone.
    await call(h, 'POST', `/v1/nodes/${nodeId}/cordon`, { body: { reason: 'wake the page' } });
    await page.locator('.live-status').getByText('signed out').waitFor(LIVE);
    const asked: string[] = [];
    page.on('request', (request) => asked.push(request.url()));
    await page.waitForTimeout(4_000);
    expect(asked).toEqual([]);
    expect(b.blocked).toEqual([]);
  });
});
