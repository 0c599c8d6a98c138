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
    await page.getByLabel('API key').fill(h.operatorKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Fleet' }).waitFor();
    await screenshot(page, 'console-fleet');

    await page.getByLabel('hostname').fill('b7-03');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/hostname=b7-03/);
    const rows = page.locator('table').first().locator('tbody tr');
    expect(await rows.count()).toBe(1);
    await page.getByRole('link', { name: 'gpu-b7-03' }).click();
    await page.getByRole('heading', { name: /gpu-b7-03/ }).waitFor();
    const cordon = page.locator('[data-axis="cordon"] .value');
    expect(await cordon.textContent()).toBe('not cordoned');

    const cordonForm = page.locator('form', {
      has: page.getByRole('button', { name: 'Cordon', exact: true }),
    });
    await cordonForm.getByPlaceholder('reason (optional)').fill('swap a fan');
    await cordonForm.getByRole('button').click();
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
});
