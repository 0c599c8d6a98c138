import { describe, expect, it } from 'vitest';
import { nodeLabels } from '../../db/schema';
import { setNode } from '../support/builders';
import { allocate, call, eventsOf, seedNode, seedPool, tenantKey } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { Browser, csrfOf, flashOf, useConsole } from './console-client';

const h = useHarness();
const TEMPORAL_UI = 'http://127.0.0.1:8233';
const server = useConsole(h, { temporalUiUrl: TEMPORAL_UI });

const nodeOf = async (id: string) => (await call(h, 'GET', `/v1/nodes/${id}`)).body;

/** Posts the node page's form of `control` with `fields`; the node page it returns to. */
async function submit(
  browser: Browser,
  nodeId: string,
  control: string,
  fields: Record<string, string> = {},
) {
  const page = await browser.get(`/console/nodes/${nodeId}`);
  expect(page.html, control).toContain(`action="/console/nodes/${nodeId}/${control}"`);
  const node = await nodeOf(nodeId);
  const done = await browser.post(`/console/nodes/${nodeId}/${control}`, {
    csrf: csrfOf(page),
    version: String(node.version),
    ...fields,
  });
  expect(done.status, control).toBe(303);
  expect(done.location).toBe(`/console/nodes/${nodeId}`);
  return browser.get(done.location!);
}

describe('node page controls', () => {
  it('drain with a deadline starts one drain; the page shows it running with its progress', async () => {
    await seedPool(h, { id: 'pool-drain-console', tenantId: 'acme' });
    const nodeId = await seedNode(h, {
      poolId: 'pool-drain-console',
      tenantId: 'acme',
      hostname: 'gpu-dc-1',
    });
    await allocate(h, nodeId, 'acme');
    const browser = new Browser(server.base);
    await browser.signIn(h.operatorKey);

    const shown = await submit(browser, nodeId, 'drain', { deadline: '2h', reason: 'replace PSU' });
    expect(flashOf(shown)?.[0]).toBe('ok');
    expect(flashOf(shown)?.[1]).toMatch(
      /^gpu-dc-1 draining: operation op_[0-9a-z]{26} is (pending|running)\.$/,
    );
    const operations = (await call(h, 'GET', `/v1/operations?nodeId=${nodeId}&kind=drain`)).body.items;
    expect(operations).toHaveLength(1);
    expect(operations[0].reason).toBe('replace PSU');
    // While the allocation holds the node, the page lists the drain with what it waits for.
    const page = await eventually(async () => {
      const p = await browser.get(`/console/nodes/${nodeId}`);
      return /Waiting for 1 live allocation until \d\d:\d\dZ, then what is left is released by force within the pool&#39;s disruption budget\./.test(
        p.html,
      )
        ? p
        : undefined;
    });
    expect(page.html).toContain(operations[0].id);
    // Linked to its workflow in the Temporal UI.
    expect(page.html).toContain(
      `href="${TEMPORAL_UI}/namespaces/default/workflows/${encodeURIComponent(`drain/${nodeId}`)}"`,
    );
    expect(page.html).toContain('draining');
    // A draining node offers no second drain.
    expect(page.html).not.toContain(`action="/console/nodes/${nodeId}/drain"`);
    await call(h, 'DELETE', `/v1/operations/${operations[0].id}`, { body: {} });
  });

  it('label and taint: set and remove operator labels and taints, one event each; inventory labels stay read-only', async () => {
    await seedPool(h, { id: 'pool-lt' });
    const nodeId = await seedNode(h, { poolId: 'pool-lt', labels: { rack: 'b7' } });
    const browser = new Browser(server.base);
    await browser.signIn(h.operatorKey);

    let page = await submit(browser, nodeId, 'label', { key: 'gpu.model', value: 'H100' });
    expect(flashOf(page)?.[0]).toBe('ok');
    expect((await nodeOf(nodeId)).labels).toContainEqual({
      key: 'gpu.model',
      value: 'H100',
      source: 'operator',
    });
    page = await submit(browser, nodeId, 'unlabel', { key: 'rack' });
    expect((await nodeOf(nodeId)).labels.map((l: { key: string }) => l.key)).toEqual(['gpu.model']);
    expect(await eventsOf(h, nodeId, 'node.labeled')).toHaveLength(2);

    page = await submit(browser, nodeId, 'taint', { key: 'rma-pending' });
    expect((await nodeOf(nodeId)).noScheduleReasons).toContain('taint:rma-pending');
    expect(page.html).toContain('<code>rma-pending</code>');
    page = await submit(browser, nodeId, 'untaint', { key: 'rma-pending' });
    expect((await nodeOf(nodeId)).noScheduleReasons).not.toContain('taint:rma-pending');
    expect(await eventsOf(h, nodeId, 'node.tainted')).toHaveLength(2);

    // A label key the API refuses: its message in the flash, nothing changed.
    const before = await nodeOf(nodeId);
    page = await submit(browser, nodeId, 'label', { key: '-bad key-', value: 'x' });
    expect(flashOf(page)?.[0]).toBe('error');
    expect(flashOf(page)?.[1]).toContain('INVALID_INPUT');
    expect((await nodeOf(nodeId)).version).toBe(before.version);

    // Inventory labels (the agent's) get no remove button.
    await h.db.insert(nodeLabels).values({ nodeId, key: 'cpu', value: 'epyc', source: 'inventory' });
    page = await browser.get(`/console/nodes/${nodeId}`);
    expect(page.html).toContain('epyc');
    expect(page.html).not.toContain('name="key" value="cpu"');
  });

  it('clear maintenance is offered only while the node is in maintenance', async () => {
    await seedPool(h, { id: 'pool-mnt' });
    const nodeId = await seedNode(h, { poolId: 'pool-mnt' });
    const browser = new Browser(server.base);
    await browser.signIn(h.operatorKey);
    expect((await browser.get(`/console/nodes/${nodeId}`)).html).not.toContain('clear-maintenance');
    await setNode(h, nodeId, { maintenance: true });
    const page = await submit(browser, nodeId, 'clear-maintenance', { reason: 'PSU swapped' });
    expect(flashOf(page)?.[0]).toBe('ok');
    expect((await nodeOf(nodeId)).maintenance).toBe(false);
    expect(await eventsOf(h, nodeId, 'node.maintenance.cleared')).toMatchObject([{ reason: 'PSU swapped' }]);
    expect(page.html).not.toContain('clear-maintenance');
  });

  it('block needs a reason; block and unblock each record one event', async () => {
    await seedPool(h, { id: 'pool-block' });
    const nodeId = await seedNode(h, { poolId: 'pool-block' });
    const browser = new Browser(server.base);
    await browser.signIn(h.operatorKey);
    let page = await submit(browser, nodeId, 'block', { reason: '' });
    expect(flashOf(page)?.[0]).toBe('error');
    expect(flashOf(page)?.[1]).toContain('INVALID_INPUT');
    expect((await nodeOf(nodeId)).access).toBe('allowed');

    page = await submit(browser, nodeId, 'block', { reason: 'stolen credential' });
    expect(flashOf(page)?.[0]).toBe('ok');
    expect((await nodeOf(nodeId)).access).toBe('blocked');
    expect(await eventsOf(h, nodeId, 'node.blocked')).toMatchObject([{ reason: 'stolen credential' }]);
    page = await submit(browser, nodeId, 'unblock');
    expect((await nodeOf(nodeId)).access).toBe('allowed');
    expect(await eventsOf(h, nodeId, 'node.unblocked')).toHaveLength(1);
  });

  it('a tenant key with cordon only gets no drain, label, taint, maintenance or block forms', async () => {
    await seedPool(h, { id: 'pool-limited', tenantId: 'limited' });
    const nodeId = await seedNode(h, { poolId: 'pool-limited', tenantId: 'limited' });
    await setNode(h, nodeId, { maintenance: true });
    const key = await tenantKey(h, 'limited', ['compute:nodes:read', 'compute:nodes:cordon']);
    const browser = new Browser(server.base);
    await browser.signIn(key.secret);
    const page = await browser.get(`/console/nodes/${nodeId}`);
    expect(page.html).toContain(`action="/console/nodes/${nodeId}/cordon"`);
    for (const control of [
      'drain',
      'label',
      'unlabel',
      'taint',
      'untaint',
      'clear-maintenance',
      'block',
      'adopt',
      'remediate',
      'revoke-identity',
      'decommission',
      'purge',
      'delete',
    ]) {
      expect(page.html, control).not.toContain(`action="/console/nodes/${nodeId}/${control}"`);
    }
    expect(page.html).not.toContain('Danger zone');
  });
});
