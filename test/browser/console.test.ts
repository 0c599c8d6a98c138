import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { allocate, call, eventsOf, seedNode, seedPool } from '../support/fixtures';
import { screenshot, useBrowser } from '../support/browser';
import { useHarness } from '../support/harness';
import { useConsole } from '../console/console-client';

const h = useHarness({ worker: false });
const server = useConsole(h);
const b = useBrowser();

describe('the console in a browser, with the outside network cut', () => {
  it('signs in, finds a node by hostname, opens it and cordons it', async () => {
    await seedPool(h, { id: 'pool-h100-east', tenantId: 'acme' });
    await seedPool(h, { id: 'pool-a100-west' });
    const nodeId = await seedNode(h, {
      poolId: 'pool-h100-east',
      tenantId: 'acme',
      hostname: 'gpu-b7-03',
      labels: { rack: 'b7', 'gpu.model': 'H100' },
    });
    for (const hostname of ['gpu-b7-01', 'gpu-b7-02', 'gpu-b8-01']) {
      await seedNode(h, { poolId: 'pool-h100-east', tenantId: 'acme', hostname, labels: { rack: 'b7' } });
    }
    await seedNode(h, { poolId: 'pool-a100-west', hostname: 'gpu-w1-01' });
    await allocate(h, nodeId, 'acme');
    const page = b.page;

    await page.goto(`${server.base}/console`);
    await screenshot(page, 'console-sign-in');
    await page.getByLabel('API key').fill(h.operatorKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Fleet overview' }).waitFor();
    await screenshot(page, 'console-fleet');

    await page.getByRole('link', { name: 'Nodes', exact: true }).click();
    await page.getByRole('heading', { name: 'Nodes', exact: true }).waitFor();
    await page.getByLabel('hostname').fill('b7-03');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/hostname=b7-03/);
    const rows = page.locator('table').first().locator('tbody tr');
    expect(await rows.count()).toBe(1);
    await page.getByRole('link', { name: 'gpu-b7-03' }).click();
    await page.getByRole('heading', { name: /gpu-b7-03/ }).waitFor();
    const cordon = page.locator('[data-axis="cordon"] .value');
    expect(await cordon.textContent()).toBe('not cordoned');

    // Cordon, from the Actions menu: its page says what it does, its form asks a reason.
    await page.getByText('Actions', { exact: true }).click();
    await page.getByRole('link', { name: 'Cordon…' }).click();
    await page.getByRole('heading', { name: 'Cordon gpu-b7-03' }).waitFor();
    await page.getByLabel('Reason').fill('swap a fan');
    await page.getByRole('button', { name: 'Cordon gpu-b7-03' }).click();
    await page.getByText('gpu-b7-03 cordoned.').waitFor();
    expect(await cordon.textContent()).toBe('cordoned');
    expect(await page.getByRole('button', { name: 'Uncordon' }).count()).toBe(1);
    await screenshot(page, 'console-node');

    // Exactly what the API would have done: one event, by the signed-in key, with the reason.
    expect((await call(h, 'GET', `/v1/nodes/${nodeId}`)).body.cordoned).toBe(true);
    expect(await eventsOf(h, nodeId, 'node.cordoned')).toMatchObject([
      { actor: 'key:bootstrap-operator', reason: 'swap a fan' },
    ]);
    // Nothing the pages needed came from anywhere but this machine.
    expect(b.blocked).toEqual([]);
  });

  it('refuses a change whose form lost its CSRF token, and changes nothing', async () => {
    await seedPool(h, { id: 'pool-csrf' });
    const nodeId = await seedNode(h, { poolId: 'pool-csrf', hostname: 'gpu-csrf-1' });
    const page = b.page;
    await signIn(page, h.operatorKey);
    await page.goto(`${server.base}/console/nodes/${nodeId}/cordon`);
    const cordonForm = page.locator('form.confirm');
    // A page of another site cannot read the token; without it the form is what a forgery sends.
    await cordonForm.locator('input[name="csrf"]').evaluate((input) => input.remove());
    await cordonForm.getByRole('button').click();
    await page.getByText("This form's CSRF token is missing or wrong: nothing was changed.").waitFor();
    await screenshot(page, 'console-csrf-refused');

    const node = (await call(h, 'GET', `/v1/nodes/${nodeId}`)).body;
    expect(node.cordoned).toBe(false);
    expect(await eventsOf(h, nodeId, 'node.cordoned')).toEqual([]);
    expect(b.blocked).toEqual([]);
  });

  it('answers a 404 page, never a 500, to ids and paths that name nothing', async () => {
    const page = b.page;
    await signIn(page, h.operatorKey);
    const missing = `node_${'0'.repeat(26)}`;
    for (const path of [
      '/console/nodes/not-a-node',
      `/console/nodes/${missing}`,
      '/console/nodes/%E0%A4%A',
      `/console/nodes/${missing}/cordon`,
      `/console/nodes/${missing}/decommission`,
      `/console/nodes/${missing}/purge`,
      `/console/nodes/${missing}/no-such-control`,
      '/console/pools/Not_A_Pool',
      '/console/pools/no-such-pool',
      '/console/operations/op_1',
      '/console/tokens/jt_1/revoke',
      '/console/no-such-page',
    ]) {
      const response = await page.goto(`${server.base}${path}`);
      expect({ path, status: response?.status() }).toEqual({ path, status: 404 });
      await page.getByRole('heading', { name: 'Not found' }).waitFor();
    }
    await screenshot(page, 'console-not-found');
    expect(b.blocked).toEqual([]);
  });
});

/** Signs `page` in with `key` and waits for the fleet overview. */
async function signIn(page: Page, key: string) {
  await page.goto(`${server.base}/console/sign-in`);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Fleet overview' }).waitFor();
}
