import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { readNode, setNode } from '../support/builders';
import { allocate, call, eventsOf, seedNode, seedPool, tenantKey } from '../support/fixtures';
import { screenshot, useBrowser } from '../support/browser';
import { eventually, useHarness } from '../support/harness';
import { useConsole } from '../console/console-client';

const h = useHarness();
const server = useConsole(h);
const b = useBrowser();

async function signIn(page: Page, key: string) {
  await page.goto(`${server.base}/console`);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Fleet' }).waitFor();
}

describe('the node page in a browser: controls and the danger zone', () => {
  it('labels and taints a node, then decommissions it through preview, a stale preview and typed confirmation', async () => {
    await seedPool(h, { id: 'pool-eol-b', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-eol-b', tenantId: 'acme', hostname: 'gpu-eol-07' });
    await setNode(h, nodeId, { liveness: 'offline', connectivity: 'disconnected' });
    const page = b.page;
    await signIn(page, h.operatorKey);
    await page.goto(`${server.base}/console/nodes/${nodeId}`);
    await page.getByRole('heading', { name: /gpu-eol-07/ }).waitFor();

    await page.getByPlaceholder('key', { exact: true }).fill('rack');
    await page.getByPlaceholder('value', { exact: true }).fill('b9');
    await page.getByRole('button', { name: 'Set label' }).click();
    await page.getByText('gpu-eol-07 labelled rack.').waitFor();
    await page.getByPlaceholder('taint key, e.g. rma-pending').fill('rma-pending');
    await page.getByRole('button', { name: 'Add taint' }).click();
    await page.getByText('gpu-eol-07 tainted rma-pending.').waitFor();
    expect((await readNode(h, nodeId)).noScheduleReasons).toContain('taint:rma-pending');
    expect(await page.locator('[data-axis="last seen"] .value').textContent()).toBe(
      'never (no heartbeat yet)',
    );

    await page.getByRole('heading', { name: 'Danger zone' }).waitFor();
    await screenshot(page, 'console-node-danger');

    await page.getByRole('link', { name: 'Preview decommission' }).click();
    await page.getByRole('heading', { name: 'Decommission gpu-eol-07' }).waitFor();
    await page.getByText('Nothing blocks the decommission.').waitFor();
    await screenshot(page, 'console-decommission-preview');
    const generation = await page.locator('input[name="nodeGeneration"]').inputValue();

    // The node changes after the preview was read: execute shows the new preview instead.
    expect(
      (await call(h, 'POST', `/v1/nodes/${nodeId}/cordon`, { body: { reason: 'meanwhile' } })).status,
    ).toBe(200);
    await page.getByLabel(/Type the hostname/).fill('gpu-eol-07');
    await page.getByLabel('Reason').fill('end of life');
    await page.getByRole('button', { name: 'Decommission gpu-eol-07' }).click();
    await page.getByText('gpu-eol-07 changed since the preview', { exact: false }).waitFor();
    const newGeneration = await page.locator('input[name="nodeGeneration"]').inputValue();
    expect(Number(newGeneration)).toBeGreaterThan(Number(generation));
    expect((await readNode(h, nodeId)).provisionState).toBe('adopted');
    expect((await call(h, 'GET', `/v1/operations?nodeId=${nodeId}&kind=decommission`)).body.items).toEqual(
      [],
    );

    // A hostname typed wrong: nothing happens, and the page says so.
    await page.getByLabel(/Type the hostname/).fill('gpu-eol-08');
    await page.getByLabel('Reason').fill('end of life');
    await page.getByRole('button', { name: 'Decommission gpu-eol-07' }).click();
    await page.getByText('"gpu-eol-08" is not this node\'s hostname', { exact: false }).waitFor();
    expect((await readNode(h, nodeId)).provisionState).toBe('adopted');

    await page.getByLabel(/Type the hostname/).fill('gpu-eol-07');
    await page.getByLabel('Reason').fill('end of life');
    await page.getByRole('button', { name: 'Decommission gpu-eol-07' }).click();
    await page.getByText(/^gpu-eol-07: decommission requested as operation op_/).waitFor();
    await eventually(async () =>
      (await readNode(h, nodeId)).provisionState === 'decommissioned' ? true : undefined,
    );
    expect(await eventsOf(h, nodeId, 'node.decommissioned')).toMatchObject([
      {
        actor: 'key:bootstrap-operator',
        reason: 'end of life',
        data: { operator: 'key:bootstrap-operator' },
      },
    ]);
    expect(b.blocked).toEqual([]);
  });

  it('purges a node that holds an allocation through the confirmation page, with force', async () => {
    await seedPool(h, { id: 'pool-purge-b', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-purge-b', tenantId: 'acme', hostname: 'gpu-pg-07' });
    await allocate(h, nodeId, 'acme');
    const page = b.page;
    await signIn(page, h.operatorKey);
    await page.goto(`${server.base}/console/nodes/${nodeId}`);
    await page.getByRole('link', { name: 'Purge…' }).click();
    await page.getByRole('heading', { name: 'Purge gpu-pg-07?' }).waitFor();
    await page.getByText('This cannot be undone.').waitFor();
    await page.getByLabel(/Force: release its 1 live allocation/).check();
    await page.getByLabel('Reason').fill('RMA 4411');
    // A hostname typed wrong: the page again, nothing done, the reason and force as typed.
    await page.getByLabel(/Type the hostname/).fill('gpu-pg-70');
    await page.getByRole('button', { name: 'Purge gpu-pg-07' }).click();
    await page.getByText('"gpu-pg-70" is not this node\'s hostname', { exact: false }).waitFor();
    expect((await readNode(h, nodeId)).provisionState).toBe('adopted');
    expect(await page.getByLabel('Reason').inputValue()).toBe('RMA 4411');
    expect(await page.getByLabel(/Force: release its 1 live allocation/).isChecked()).toBe(true);
    await screenshot(page, 'console-purge-confirm');
    await page.getByLabel(/Type the hostname/).fill('gpu-pg-07');
    await page.getByRole('button', { name: 'Purge gpu-pg-07' }).click();
    await page.getByText(/^gpu-pg-07: purge requested as operation op_/).waitFor();
    expect((await readNode(h, nodeId)).provisionState).toBe('purging');
    expect((await call(h, 'GET', `/v1/allocations?nodeId=${nodeId}&live=true`)).body.items).toEqual([]);
    expect(b.blocked).toEqual([]);
  });

  it('blocks a node from the keyboard alone: the Actions menu, its confirmation page, back to the node', async () => {
    await seedPool(h, { id: 'pool-keys-b', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-keys-b', tenantId: 'acme', hostname: 'gpu-kb-07' });
    await allocate(h, nodeId, 'acme');
    const page = b.page;
    await signIn(page, h.operatorKey);
    await page.goto(`${server.base}/console/nodes/${nodeId}`);
    await page.getByRole('heading', { name: /gpu-kb-07/ }).waitFor();
    const menu = page.locator('details.menu');
    await menu.locator('summary').focus();
    await page.keyboard.press('Enter');
    expect(await menu.getAttribute('open')).toBe('');
    await screenshot(page, 'console-node-actions');
    // Tab through the menu to Block…, which opens its page: nothing is blocked yet.
    const block = page.getByRole('link', { name: 'Block…' });
    for (let tabs = 0; tabs < 12 && !(await block.evaluate((link) => link.matches(':focus'))); tabs++) {
      await page.keyboard.press('Tab');
    }
    expect(await block.evaluate((link) => link.matches(':focus'))).toBe(true);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Block gpu-kb-07?' }).waitFor();
    await page.getByText('It holds 1 live allocation:').waitFor();
    expect((await readNode(h, nodeId)).access).toBe('allowed');
    await page.getByLabel('Reason').focus();
    await page.keyboard.type('credential seen on a paste site');
    await page.keyboard.press('Enter');
    await page.getByText('gpu-kb-07 blocked.').waitFor();
    expect((await readNode(h, nodeId)).access).toBe('blocked');
    // Blocked, the header suggests the way back.
    await page.getByRole('link', { name: 'Unblock…' }).first().waitFor();
    expect(await eventsOf(h, nodeId, 'node.blocked')).toMatchObject([
      { reason: 'credential seen on a paste site' },
    ]);
    expect(b.blocked).toEqual([]);
  });

  it("a tenant key's node page has no danger zone", async () => {
    await seedPool(h, { id: 'pool-tenant-b', tenantId: 'tb' });
    const nodeId = await seedNode(h, { poolId: 'pool-tenant-b', tenantId: 'tb', hostname: 'gpu-tb-07' });
    const key = await tenantKey(h, 'tb', [
      'compute:nodes:read',
      'compute:nodes:cordon',
      'compute:nodes:delete',
    ]);
    const page = b.page;
    await signIn(page, key.secret);
    await page.goto(`${server.base}/console/nodes/${nodeId}`);
    await page.getByRole('heading', { name: /gpu-tb-07/ }).waitFor();
    await page.getByText('Actions', { exact: true }).click();
    await page.getByRole('link', { name: 'Cordon…' }).waitFor();
    expect(await page.getByText('Danger zone').count()).toBe(0);
    expect(await page.getByRole('link', { name: /Purge|Decommission|Delete/ }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /Purge|Decommission|Delete/ }).count()).toBe(0);
    expect(b.blocked).toEqual([]);
  });
});
