import { describe, expect, it } from 'vitest';
import { operations } from '../../db/schema';
import { newId } from '../../domain/ids';
import { operationWhen, readNode } from '../support/builders';
import { allocate, call, seedNode, seedPool } from '../support/fixtures';
import { screenshot, useBrowser } from '../support/browser';
import { useHarness } from '../support/harness';
import { useConsole } from '../console/console-client';

const h = useHarness();
const server = useConsole(h);
const b = useBrowser();

/** A desktop screen, the width the operations list was unreadable at. */
const DESKTOP = { width: 1440, height: 900 };

async function signIn() {
  const page = b.page;
  await page.goto(`${server.base}/console/sign-in`);
  await page.getByLabel('API key').fill(h.operatorKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Fleet overview' }).waitFor();
  return page;
}

describe('the operations pages in a browser', () => {
  it('lists 50 operations at 1440 px on one line each: hostnames whole, a long actor wrapping in its own column', async () => {
    await seedPool(h, { id: 'pool-ops-wide', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-ops-wide', hostname: 'gpu-wide-01' });
    // An actor id no line break fits in, as the outside look found it.
    const actor = `key:${'x'.repeat(70)}`;
    await h.db.insert(operations).values(
      Array.from({ length: 50 }, () => {
        const id = newId('op');
        return {
          id,
          kind: 'purge' as const,
          nodeId,
          poolId: 'pool-ops-wide',
          status: 'succeeded' as const,
          workflowId: `purge/${nodeId}/${id}`,
          actor,
          reason: 'a reason long enough to need cutting short in a list of fifty rows, said once more',
          completedAt: new Date(),
        };
      }),
    );
    const page = await signIn();
    await page.setViewportSize(DESKTOP);
    await page.goto(`${server.base}/console/operations?kind=purge`);
    await page.getByRole('heading', { name: 'Operations' }).waitFor();
    // Measured in one turn of the page's script: the live region may be replaced between two calls.
    const measured = await page.locator('html').evaluate((html) => {
      const rows = [...html.querySelectorAll('table.operations tbody tr')];
      const on = [...html.querySelectorAll('table.operations td.on a')];
      return {
        rows: rows.length,
        tallestRow: Math.max(...rows.map((r) => r.getBoundingClientRect().height)),
        pageHeight: html.scrollHeight,
        sideways: html.scrollWidth > html.clientWidth,
        // The whole table in its box at this width: no scrolling inside it either.
        boxScrolls: [...html.querySelectorAll('.operation-list')].some(
          (box) => box.scrollWidth > box.clientWidth,
        ),
        // A hostname on one line, as wide as its words: not squeezed to a sliver.
        hostnames: [...new Set(on.map((a) => a.textContent))],
        squeezed: on.filter((a) => a.getClientRects().length > 1 || a.getBoundingClientRect().width < 60)
          .length,
      };
    });
    expect(measured).toMatchObject({
      rows: 50,
      sideways: false,
      boxScrolls: false,
      hostnames: ['gpu-wide-01'],
      squeezed: 0,
    });
    // The 74 characters of the actor wrap in a few lines of its own column; 50 such rows make a
    // page of a few thousand pixels, not 15,000.
    expect(measured.tallestRow).toBeLessThan(120);
    expect(measured.pageHeight).toBeLessThan(6_000);
    await screenshot(page, 'console-operations-1440', { fullPage: false });
    expect(b.blocked).toEqual([]);
  });

  it("cancels a drain from the keyboard: its page, its confirmation, the reason, and the node as the page said; the drain's allocations drawn", async () => {
    await seedPool(h, { id: 'pool-ops-keys', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-ops-keys', tenantId: 'acme', hostname: 'gpu-keys-01' });
    await allocate(h, nodeId, 'acme', new Date(Date.now() + 30 * 60_000));
    await allocate(h, nodeId, 'acme');
    const drain = (
      await call(h, 'POST', `/v1/nodes/${nodeId}/drain`, { body: { reason: 'psu', deadline: '1h' } })
    ).body.operation;
    await operationWhen(h, drain.id, (op) => op.progress.phase === 'waiting');
    const page = await signIn();
    await page.setViewportSize(DESKTOP);
    await page.goto(`${server.base}/console/operations/${drain.id}`);
    const picture = page.getByRole('img', {
      name: new RegExp(`Drain ${drain.id}: its allocations against its deadline`),
    });
    await picture.waitFor();
    await screenshot(page, 'console-drain-timeline');

    const cancel = page.getByRole('button', { name: 'Cancel drain…' });
    await cancel.focus();
    expect(await cancel.evaluate((el) => el.matches(':focus-visible'))).toBe(true);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: `Cancel drain ${drain.id}` }).waitFor();
    await page.getByText('Draining comes off gpu-keys-01').waitFor();
    await screenshot(page, 'console-cancel-drain');
    expect((await call(h, 'GET', `/v1/operations/${drain.id}`)).body.status).toBe('running');
    await page.getByLabel('reason').fill('wrong rack');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await page
      .getByText(`Drain ${drain.id} cancelled: draining came off gpu-keys-01, which stays cordoned.`)
      .waitFor();
    expect((await call(h, 'GET', `/v1/operations/${drain.id}`)).body).toMatchObject({
      status: 'cancelled',
      cancellation: { reason: 'wrong rack' },
    });
    expect(await readNode(h, nodeId)).toMatchObject({ cordoned: true, noScheduleReasons: [] });
    expect(b.blocked).toEqual([]);
  });
});
