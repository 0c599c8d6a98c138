import { describe, expect, it } from 'vitest';
import { nodeLabels } from '../../db/schema';
import { setNode } from '../support/builders';
import { allocate, call, eventsOf, seedNode, seedPool, tenantKey } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { badge, Browser, csrfOf, flashOf, useConsole, type Page } from './console-client';
import { linkTo, openControl, sendControl } from './node-page';

const h = useHarness();
const TEMPORAL_UI = 'http://127.0.0.1:8233';
const server = useConsole(h, { temporalUiUrl: TEMPORAL_UI });

const nodeOf = async (id: string) => (await call(h, 'GET', `/v1/nodes/${id}`)).body;

/** The controls whose forms are in their section of the node page (labels, taints). */
const INLINE = ['label', 'unlabel', 'taint', 'untaint'];

/**
 * Sends the form of `control` with `fields`, as a person would reach it: a label's or a taint's
 * in its section of the node page, any other on its page, linked from the node page's Actions
 * menu. Answers the node page it returns to.
 */
async function submit(
  browser: Browser,
  nodeId: string,
  control: string,
  fields: Record<string, string> = {},
) {
  let done;
  if (INLINE.includes(control)) {
    const page = await browser.get(`/console/nodes/${nodeId}`);
    expect(page.html, control).toContain(`action="/console/nodes/${nodeId}/${control}"`);
    const node = await nodeOf(nodeId);
    done = await browser.post(`/console/nodes/${nodeId}/${control}`, {
      csrf: csrfOf(page),
      version: String(node.version),
      ...fields,
    });
  } else {
    done = await sendControl(browser, await openControl(browser, nodeId, control), nodeId, control, fields);
  }
  expect(done.status, control).toBe(303);
  expect(done.location).toBe(`/console/nodes/${nodeId}`);
  return browser.get(done.location!);
}

/** The node page's entry of operation `id` in its operations timeline. */
function entryOf(page: Page, id: string): string {
  const entry = page.html.split(`data-operation="${id}"`)[1];
  if (!entry) throw new Error(`operation ${id} is not in the node page's timeline`);
  return entry.split(/<li class="op-entry|<\/ol>/)[0]!;
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
      /^gpu-dc-1: drain requested as operation op_[0-9a-z]{26} \(its progress is under Operations\)\.$/,
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
    expect(page.html).toMatch(badge('draining', 'draining'));
    // Running: linked to its page, where it is cancelled.
    expect(entryOf(page, operations[0].id)).toContain(`href="/console/operations/${operations[0].id}"`);
    expect(entryOf(page, operations[0].id)).toMatch(badge('status', 'running|pending'));
    // A draining node offers no second drain; its uncordon says it cancels the drain.
    expect(page.html).not.toContain(linkTo(nodeId, 'drain'));
    expect(page.html).toContain('back in placement; cancels its drain');
    const uncordon = await browser.get(`/console/nodes/${nodeId}/uncordon`);
    expect(uncordon.html).toContain('uncordoning it cancels the drain');

    // Cancelled, the drain stays on the node page: its status, who cancelled it and why.
    expect(
      (await call(h, 'DELETE', `/v1/operations/${operations[0].id}`, { body: { reason: 'wrong node' } }))
        .status,
    ).toBe(200);
    const ended = await browser.get(`/console/nodes/${nodeId}`);
    const entry = entryOf(ended, operations[0].id);
    expect(entry).toMatch(badge('status', 'cancelled'));
    expect(entry).toContain('Cancelled by key:bootstrap-operator');
    expect(entry).toContain('wrong node');
    expect(entry).toContain('replace PSU');
    expect(ended.html).not.toContain('id="live-operations" data-live="" data-live-busy=""');
  });

  it('a drained node keeps its finished drain in the timeline: its result and the allocations it released by force', async () => {
    await seedPool(h, { id: 'pool-drained-console', tenantId: 'acme' });
    const nodeId = await seedNode(h, {
      poolId: 'pool-drained-console',
      tenantId: 'acme',
      hostname: 'gpu-dd-1',
    });
    const allocationId = await allocate(h, nodeId, 'acme');
    const browser = new Browser(server.base);
    await browser.signIn(h.operatorKey);
    // A deadline of now: what is live is released by force at the first look.
    await submit(browser, nodeId, 'drain', { deadline: '0s', reason: 'RMA' });
    const [drain] = (await call(h, 'GET', `/v1/operations?nodeId=${nodeId}&kind=drain`)).body.items;
    await eventually(async () =>
      (await call(h, 'GET', `/v1/operations/${drain.id}`)).body.status === 'succeeded' ? true : undefined,
    );
    const page = await browser.get(`/console/nodes/${nodeId}`);
    const entry = entryOf(page, drain.id);
    expect(entry).toMatch(badge('status', 'succeeded'));
    expect(entry).toContain('Drained: the node holds nothing live.');
    expect(entry).toContain('Released by force: 1 allocation');
    expect(entry).toContain(`<code>${allocationId}</code> of acme`);
    expect(entry).toContain('by system:drain');
    expect(entry).toContain('ended <time');
    // The drain is over: nothing says it drains any more.
    expect(page.html).not.toMatch(badge('draining', 'draining'));
    expect(page.html).not.toContain('drain requested');
  });

  it('a node drain of a pool drain names the pool drain it is part of, linked', async () => {
    await seedPool(h, { id: 'pool-part-of', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-part-of', tenantId: 'acme', hostname: 'gpu-po-1' });
    const poolDrain = await call(h, 'POST', '/v1/pools/pool-part-of/drain', {
      body: { reason: 'rack move' },
    });
    expect(poolDrain.status).toBe(202);
    const parent = poolDrain.body.operation.id as string;
    const drain = await eventually(async () => {
      const [op] = (await call(h, 'GET', `/v1/operations?nodeId=${nodeId}&kind=drain`)).body.items;
      return op;
    });
    const browser = new Browser(server.base);
    await browser.signIn(h.operatorKey);
    const entry = entryOf(await browser.get(`/console/nodes/${nodeId}`), drain.id);
    expect(entry).toContain(`part of <a href="/console/operations/${parent}"><code>${parent}</code></a>`);
    await call(h, 'DELETE', `/v1/operations/${parent}`, { body: { children: 'cancel' } });
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
    const form = await openControl(browser, nodeId, 'block');
    const refused = await sendControl(browser, form, nodeId, 'block', { reason: '' });
    // Refused, back to its confirmation page with the API's message.
    expect(refused.location).toBe(`/console/nodes/${nodeId}/block`);
    let page = await browser.get(refused.location!);
    expect(flashOf(page)?.[0]).toBe('error');
    expect(flashOf(page)?.[1]).toContain('INVALID_INPUT');
    expect((await nodeOf(nodeId)).access).toBe('allowed');

    page = await submit(browser, nodeId, 'block', { reason: 'stolen credential' });
    expect(flashOf(page)?.[0]).toBe('ok');
    expect((await nodeOf(nodeId)).access).toBe('blocked');
    expect(await eventsOf(h, nodeId, 'node.blocked')).toMatchObject([{ reason: 'stolen credential' }]);
    // Blocked, the header suggests its unblock.
    expect(page.html).toContain('data-suggested="unblock"');
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
    expect(page.html).toContain(linkTo(nodeId, 'cordon'));
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
      expect(page.html, control).not.toContain(`/console/nodes/${nodeId}/${control}"`);
    }
    expect(page.html).not.toContain('Danger zone');
    // Nor may it open their pages by URL.
    for (const control of ['drain', 'block', 'remediate', 'adopt', 'purge']) {
      expect((await browser.get(`/console/nodes/${nodeId}/${control}`)).status, control).toBe(404);
    }
  });
});

describe('the node page says what is true now', () => {
  it('a decommissioning node is offered no drain, block, purge, cordon, remediation or reboot', async () => {
    await seedPool(h, { id: 'pool-leaving' });
    const nodeId = await seedNode(h, { poolId: 'pool-leaving', hostname: 'gpu-leaving-1' });
    await setNode(h, nodeId, { provisionState: 'decommissioning', cordoned: true });
    const browser = new Browser(server.base);
    await browser.signIn(h.operatorKey);
    const page = await browser.get(`/console/nodes/${nodeId}`);
    expect(page.html).toMatch(badge('provision', 'decommissioning'));
    for (const control of ['drain', 'block', 'purge', 'cordon', 'uncordon', 'remediate', 'reboot', 'adopt']) {
      expect(page.html, control).not.toContain(`/console/nodes/${nodeId}/${control}"`);
    }
    expect(page.html).toContain('Not while the node is decommissioning');
    // What still makes sense stays: its identity, its labels, a decommission again (its first failed).
    expect(page.html).toContain(linkTo(nodeId, 'revoke-identity'));
    expect(page.html).toContain(linkTo(nodeId, 'decommission'));
  });

  it('a purged node says it was purged and forgotten, not connected and alive', async () => {
    await seedPool(h, { id: 'pool-purged' });
    const nodeId = await seedNode(h, { poolId: 'pool-purged', hostname: 'gpu-purged-1' });
    // As a purge leaves it: the tombstone over the last state its agent reported.
    await setNode(h, nodeId, {
      provisionState: 'purging',
      connectivity: 'connected',
      liveness: 'alive',
      lastSeenAt: new Date(Date.now() - 60_000),
      deletedAt: new Date(),
    });
    const browser = new Browser(server.base);
    await browser.signIn(h.operatorKey);
    const page = await browser.get(`/console/nodes/${nodeId}`);
    expect(page.status).toBe(200);
    expect(page.html).toMatch(badge('forgotten', 'purged'));
    expect(page.html).toContain('data-forgotten="purged"');
    expect(page.html).not.toMatch(badge('liveness', 'alive'));
    expect(page.html).toContain('<span class="value">not known (forgotten)</span>');
    expect(page.html).not.toContain('<span class="value">connected</span>');
    expect(page.html).toContain('No controls: the node is deleted.');
    expect(page.html).not.toContain('Danger zone');
  });

  it('block, adopt again and remediate act only once confirmed on their pages; a POST without it changes nothing', async () => {
    await seedPool(h, { id: 'pool-confirm', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-confirm', tenantId: 'acme', hostname: 'gpu-cf-1' });
    const allocationId = await allocate(h, nodeId, 'acme');
    await setNode(h, nodeId, {
      conditions: [{ type: 'GpuXidError', status: true, reason: 'xid 79', since: new Date().toISOString() }],
    });
    const browser = new Browser(server.base);
    await browser.signIn(h.operatorKey);
    const before = await nodeOf(nodeId);
    const events = (await eventsOf(h, nodeId)).length;
    for (const control of ['block', 'adopt', 'remediate']) {
      const page = await openControl(browser, nodeId, control);
      expect(page.html, control).toContain('name="confirm" value="yes"');
      const fields = {
        csrf: csrfOf(page),
        version: String(before.version),
        reason: 'x',
        condition: 'GpuXidError',
      };
      const skipped = await browser.post(`/console/nodes/${nodeId}/${control}`, fields);
      expect(skipped.location, control).toBe(`/console/nodes/${nodeId}/${control}`);
      expect(flashOf(await browser.get(skipped.location!))?.[1], control).toContain(
        'needs its confirmation: nothing was done',
      );
    }
    expect(await nodeOf(nodeId)).toMatchObject({ access: 'allowed', version: before.version });
    expect(await eventsOf(h, nodeId)).toHaveLength(events);
    expect((await call(h, 'GET', `/v1/operations?nodeId=${nodeId}`)).body.items).toEqual([]);

    // Remediate's page names the live allocation and what the remediation does to it.
    const remediate = await browser.get(`/console/nodes/${nodeId}/remediate`);
    expect(remediate.html).toContain(`<code>${allocationId}</code>`);
    expect(remediate.html).toContain('does not drain them');
    expect(remediate.html).toContain('GpuXidError: reset-accelerator, then reboot');
    // The node's true condition suggests it in the header.
    expect((await browser.get(`/console/nodes/${nodeId}`)).html).toContain('data-suggested="remediate"');

    // Confirmed: it runs.
    expect(remediate.html).toContain('name="condition" list="conditions-');
    const done = await sendControl(browser, remediate, nodeId, 'remediate', {
      condition: 'GpuXidError',
      reason: 'xid storm',
    });
    expect(flashOf(await browser.get(done.location!))).toEqual([
      'ok',
      expect.stringMatching(/^Remediation of GpuXidError requested as operation op_/),
    ]);
    const [remediation] = (await call(h, 'GET', `/v1/operations?nodeId=${nodeId}&kind=remediation`)).body
      .items;
    expect(remediation.reason).toBe('xid storm');
    await call(h, 'DELETE', `/v1/operations/${remediation.id}`, { body: {} });
  });
});
