import { describe, expect, it } from 'vitest';
import { allocate, call, seedNode, seedPool, tenantKey } from '../support/fixtures';
import { screenshot, useBrowser } from '../support/browser';
import { eventually, useHarness } from '../support/harness';
import { useConsole } from '../console/console-client';

const h = useHarness();
const server = useConsole(h);
const b = useBrowser();

describe('pools, join tokens and operations in a browser, with the outside network cut', () => {
  it('drains a rack of a pool from its page and shows the progress; creates a join token; lists operations', async () => {
    await seedPool(h, {
      id: 'pool-h100-east',
      tenantId: 'acme',
      grants: ['globex'],
      policy: { lostAfter: '15m', maxUnavailable: 2 },
    });
    await seedPool(h, { id: 'pool-a100-west' });
    const rack: string[] = [];
    for (const hostname of ['gpu-b7-01', 'gpu-b7-02', 'gpu-b7-03']) {
      rack.push(
        await seedNode(h, { poolId: 'pool-h100-east', tenantId: 'acme', hostname, labels: { rack: 'b7' } }),
      );
    }
    await seedNode(h, {
      poolId: 'pool-h100-east',
      tenantId: 'acme',
      hostname: 'gpu-b8-01',
      labels: { rack: 'b8' },
    });
    // A job on the first node keeps its drain (and so the pool drain) running.
    await allocate(h, rack[0]!, 'acme');
    const page = b.page;

    await page.goto(`${server.base}/console`);
    await page.getByLabel('API key').fill(h.operatorKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Fleet' }).waitFor();
    await page.getByRole('link', { name: 'Pools', exact: true }).click();
    await page.getByRole('heading', { name: 'Pools' }).waitFor();
    await screenshot(page, 'console-pools');

    await page.getByRole('link', { name: 'pool-h100-east' }).click();
    await page.getByRole('heading', { name: /Pool pool-h100-east/ }).waitFor();
    // The drain form (the page's policy form has a reason too).
    const drainForm = page.locator('form', { has: page.getByRole('button', { name: 'Drain pool' }) });
    await drainForm.getByLabel('nodes with labels').fill('rack=b7');
    await drainForm.getByLabel('at most at once').fill('2');
    await drainForm.getByLabel('deadline').fill('2h');
    await drainForm.getByLabel('reason').fill('driver 580 roll-out');
    await drainForm.getByRole('button', { name: 'Drain pool' }).click();
    await page.getByText(/^Pool pool-h100-east draining the nodes with rack=b7: operation op_/).waitFor();

    const drains = (await call(h, 'GET', '/v1/operations?kind=pool-drain')).body.items;
    expect(drains).toHaveLength(1);
    const op = (await call(h, 'GET', `/v1/operations/${drains[0].id}`)).body;
    expect(op.result).toMatchObject({ maxConcurrent: 2, nodeIds: [...rack].sort() });
    // Its progress shows in the pool drain's region, and the node list shows every rack node
    // cordoned, the held one still draining, once the workflow got that far (a reload at most).
    const progress = page.locator('#live-pool-drain .progress');
    const cell = (text: string) => page.locator('#live-pool-nodes td', { hasText: new RegExp(`^${text}$`) });
    await eventually(
      async () => {
        const settled =
          (await progress.count()) > 0 &&
          (await cell('draining').count()) === 1 &&
          (await cell('cordoned').count()) === 3;
        if (settled) return true;
        await page.reload();
        return undefined;
      },
      30_000,
      250,
    );
    expect(await page.locator('#live-pool-nodes tr', { hasText: 'gpu-b7-01' }).textContent()).toContain(
      'draining',
    );
    expect(await page.locator('#live-pool-nodes tr', { hasText: 'gpu-b8-01' }).textContent()).not.toContain(
      'cordoned',
    );
    expect(await page.locator('#live-pool-drain').textContent()).toContain(op.id);
    expect(await page.getByRole('button', { name: 'Drain pool' }).count()).toBe(0);
    await screenshot(page, 'console-pool');

    await page.getByRole('link', { name: 'Join tokens' }).click();
    await page.getByRole('heading', { name: 'Join tokens' }).waitFor();
    await page.getByLabel('pool').selectOption('pool-h100-east');
    await page.getByLabel('uses').fill('4');
    await page.getByLabel('labels for the nodes').fill('rack=b9');
    await page.getByRole('button', { name: 'Create token' }).click();
    const line = page.locator('pre.join-line');
    await line.waitFor();
    const secret = (await page.locator('code.token-secret').textContent())!;
    expect(await line.textContent()).toBe(
      `drydock-agent join --api ${server.base} --token ${secret} --data-dir /var/lib/drydock`,
    );
    expect(page.url()).not.toContain(secret);
    await screenshot(page, 'console-tokens');

    await page.getByRole('link', { name: 'Operations' }).click();
    await page.getByRole('heading', { name: 'Operations' }).waitFor();
    await page.getByRole('link', { name: 'pool pool-h100-east' }).waitFor();
    await screenshot(page, 'console-operations');

    // Nothing the pages needed came from anywhere but this machine.
    expect(b.blocked).toEqual([]);
    await call(h, 'DELETE', `/v1/operations/${op.id}`, { body: { children: 'cancel' } });
  });

  it("a tenant key's pools page lists only its pools (owned or granted)", async () => {
    await seedPool(h, { id: 'pool-acme-own', tenantId: 'br-acme' });
    await seedPool(h, { id: 'pool-shared', tenantId: 'br-other', grants: ['br-acme'] });
    await seedPool(h, { id: 'pool-other-only', tenantId: 'br-other' });
    const key = await tenantKey(h, 'br-acme', ['compute:nodes:read']);
    const page = b.page;
    await page.goto(`${server.base}/console`);
    await page.getByLabel('API key').fill(key.secret);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'Pools', exact: true }).click();
    await page.getByRole('heading', { name: 'Pools' }).waitFor();
    const listed = await page.locator('tbody tr td:first-child').allTextContents();
    expect(listed.sort()).toEqual(['pool-acme-own', 'pool-shared']);
    // No join tokens for a key without the tokens actions.
    expect(await page.getByRole('link', { name: 'Join tokens' }).count()).toBe(0);
    expect(b.blocked).toEqual([]);
  });
});
