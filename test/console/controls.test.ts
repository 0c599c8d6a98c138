import { describe, expect, it } from 'vitest';
import { join } from '../support/agents';
import { call, eventsOf, seedNode, seedPool, tenantKey } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { Browser, csrfOf, flashOf, useConsole } from './console-client';
import { linkTo, openControl, sendControl } from './node-page';

const h = useHarness({ worker: false });
const server = useConsole(h);

async function operator(): Promise<Browser> {
  const browser = new Browser(server.base);
  expect((await browser.signIn(h.operatorKey)).status).toBe(303);
  return browser;
}

const nodeOf = async (id: string) => (await call(h, 'GET', `/v1/nodes/${id}`)).body;

describe('console controls', () => {
  it('refuse a POST without or with a wrong CSRF token: 403, node unchanged, no event', async () => {
    await seedPool(h, { id: 'pool-csrf' });
    const nodeId = await seedNode(h, { poolId: 'pool-csrf' });
    const before = await nodeOf(nodeId);
    const browser = await operator();
    const page = await browser.get(`/console/nodes/${nodeId}`);
    const csrf = csrfOf(page);
    const forms: Record<string, string>[] = [
      { version: String(before.version) },
      { version: String(before.version), csrf: 'x'.repeat(csrf.length) },
      { version: String(before.version), csrf: csrf.slice(1) },
    ];
    for (const fields of forms) {
      const refused = await browser.post(`/console/nodes/${nodeId}/cordon`, fields);
      expect(refused.status).toBe(403);
      expect(refused.html).toContain('nothing was changed');
    }
    // Another session's token is no good either.
    const other = await operator();
    const otherCsrf = csrfOf(await other.get('/console'));
    expect((await browser.post(`/console/nodes/${nodeId}/cordon`, { csrf: otherCsrf })).status).toBe(403);

    const after = await nodeOf(nodeId);
    expect(after.cordoned).toBe(false);
    expect(after.version).toBe(before.version);
    expect(await eventsOf(h, nodeId, 'node.cordoned')).toEqual([]);
  });

  it('cordon and uncordon through the console change the node as the API does, one event each', async () => {
    await seedPool(h, { id: 'pool-cordon' });
    const nodeId = await seedNode(h, { poolId: 'pool-cordon', hostname: 'gpu-console-1' });
    const browser = await operator();
    const page = await browser.get(`/console/nodes/${nodeId}`);
    expect(page.html).toContain('gpu-console-1');
    expect(page.html).toContain('not cordoned');
    const before = await nodeOf(nodeId);
    expect(page.html).toContain(`name="version" value="${before.version}"`);

    const done = await browser.post(`/console/nodes/${nodeId}/cordon`, {
      csrf: csrfOf(page),
      version: String(before.version),
      reason: 'swap a fan',
    });
    expect(done.status).toBe(303);
    expect(done.location).toBe(`/console/nodes/${nodeId}`);
    const after = await nodeOf(nodeId);
    expect(after.cordoned).toBe(true);
    expect(after.version).toBe(before.version + 1);
    const events = await eventsOf(h, nodeId, 'node.cordoned');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ actor: 'key:bootstrap-operator', reason: 'swap a fan' });

    // The page after the redirect says so once, and now offers uncordon.
    const shown = await browser.get(done.location!);
    expect(shown.html).toContain('gpu-console-1 cordoned.');
    expect(shown.html).toContain(`action="/console/nodes/${nodeId}/uncordon"`);
    expect(shown.html).not.toContain(`action="/console/nodes/${nodeId}/cordon"`);
    expect((await browser.get(done.location!)).html).not.toContain('gpu-console-1 cordoned.');

    await browser.post(`/console/nodes/${nodeId}/uncordon`, {
      csrf: csrfOf(shown),
      version: String(after.version),
    });
    expect((await nodeOf(nodeId)).cordoned).toBe(false);
    expect(await eventsOf(h, nodeId, 'node.uncordoned')).toHaveLength(1);
  });

  it('a form of a stale version is refused by the API, its message shown, nothing changed', async () => {
    await seedPool(h, { id: 'pool-stale' });
    const nodeId = await seedNode(h, { poolId: 'pool-stale' });
    const browser = await operator();
    const page = await browser.get(`/console/nodes/${nodeId}`);
    const stale = (await nodeOf(nodeId)).version;
    // Someone else changes the node after the page was read.
    expect((await call(h, 'POST', `/v1/nodes/${nodeId}/cordon`, { body: {} })).status).toBe(200);
    expect((await call(h, 'POST', `/v1/nodes/${nodeId}/uncordon`, { body: {} })).status).toBe(200);
    const current = await nodeOf(nodeId);

    const done = await browser.post(`/console/nodes/${nodeId}/cordon`, {
      csrf: csrfOf(page),
      version: String(stale),
    });
    expect(done.status).toBe(303);
    const shown = await browser.get(done.location!);
    expect(shown.html).toContain('cordon refused:');
    expect(shown.html).toContain('(CONFLICT)');
    expect(await nodeOf(nodeId)).toMatchObject({ cordoned: false, version: current.version });
    expect(await eventsOf(h, nodeId, 'node.cordoned')).toHaveLength(1);
  });

  it('approve a pending node into a pool from the fleet page', async () => {
    await seedPool(h, { id: 'pool-approve', tenantId: 'acme' });
    const joined = await join(h, {});
    const nodeId = joined.body.nodeId as string;
    const browser = await operator();
    const fleet = await browser.get('/console');
    expect(fleet.html).toContain(`action="/console/nodes/${nodeId}/approve"`);
    expect(fleet.html).toContain(`action="/console/nodes/${nodeId}/reject"`);
    const done = await browser.post(`/console/nodes/${nodeId}/approve`, {
      csrf: csrfOf(fleet),
      version: String((await nodeOf(nodeId)).version),
      poolId: 'pool-approve',
    });
    expect(done.location).toBe('/console');
    expect((await browser.get('/console')).html).toContain('approved.');
    const node = await nodeOf(nodeId);
    expect(node.provisionState).not.toBe('pending');
    expect(node.poolId).toBe('pool-approve');
  });
});

describe('approving a pending node from its page', () => {
  it('pre-selects the pool it asked for, not the first pool, and approves it there', async () => {
    await seedPool(h, { id: 'pool-aaa-first', tenantId: 'acme' });
    await seedPool(h, { id: 'pool-asked', tenantId: 'acme' });
    const joined = await join(h, { hostname: 'gpu-asks-1', poolId: 'pool-asked' });
    expect(joined.status).toBe(201);
    const nodeId = joined.body.nodeId as string;
    expect((await nodeOf(nodeId)).requestedPoolId).toBe('pool-asked');
    const browser = await operator();
    // The header suggests it: a pending node waits for a decision.
    const nodePage = await browser.get(`/console/nodes/${nodeId}`);
    expect(nodePage.html).toContain('data-suggested="approve"');
    expect(nodePage.html).toContain('data-suggested="reject"');
    const page = await openControl(browser, nodeId, 'approve');
    expect(page.html).toMatch(/<option value="pool-asked" selected="">pool-asked \(asked for\)<\/option>/);
    expect(page.html).not.toMatch(/<option value="pool-aaa-first" selected/);
    expect(page.html).toContain('It asked for pool pool-asked when it joined.');
    // Nothing changes until the form is sent.
    expect((await nodeOf(nodeId)).provisionState).toBe('pending');

    const done = await sendControl(browser, page, nodeId, 'approve', {
      poolId: 'pool-asked',
      reason: 'racked',
    });
    // Back to the node's page, which now shows it in the pool.
    expect(done.location).toBe(`/console/nodes/${nodeId}`);
    const shown = await browser.get(done.location!);
    expect(flashOf(shown)).toEqual(['ok', 'gpu-asks-1 approved.']);
    expect(shown.html).toContain('<a href="/console/pools/pool-asked">pool-asked</a>');
    const node = await nodeOf(nodeId);
    expect(node.provisionState).not.toBe('pending');
    expect(node.poolId).toBe('pool-asked');
  });

  it('a node that asked for no pool gets no pool chosen for it', async () => {
    await seedPool(h, { id: 'pool-aab-first', tenantId: 'acme' });
    const joined = await join(h, {});
    const nodeId = joined.body.nodeId as string;
    const page = await openControl(await operator(), nodeId, 'approve');
    expect(page.html).toContain('<option value="">choose a pool</option>');
    expect(page.html).not.toMatch(/<option value="[^"]+" selected/);
    expect(page.html).toContain('It asked for no pool when it joined.');
  });
});

describe('a tenant key in the console', () => {
  it("sees only its pools' nodes, and only the buttons its actions allow", async () => {
    await seedPool(h, { id: 'pool-mine', tenantId: 'mine' });
    await seedPool(h, { id: 'pool-theirs', tenantId: 'theirs' });
    const mine = await seedNode(h, { poolId: 'pool-mine', hostname: 'gpu-mine-1' });
    const theirs = await seedNode(h, { poolId: 'pool-theirs', hostname: 'gpu-theirs-1' });
    await join(h, {}); // a pending node: only operators decide on those

    const reader = new Browser(server.base);
    const key = await tenantKey(h, 'mine', ['compute:nodes:read'], 'mine-reader');
    expect((await reader.signIn(key.secret)).status).toBe(303);
    const fleet = await reader.get('/console');
    expect(fleet.html).toContain('gpu-mine-1');
    expect(fleet.html).not.toContain('gpu-theirs-1');
    expect(fleet.html).toContain('pool-mine');
    expect(fleet.html).not.toContain('pool-theirs');
    expect(fleet.html).not.toMatch(/action="[^"]*\/(approve|reject)"/);

    const page = await reader.get(`/console/nodes/${mine}`);
    expect(page.status).toBe(200);
    expect(page.html).not.toMatch(/action="[^"]*\/(cordon|uncordon)"/);
    // Another tenant's node does not exist for this key.
    expect((await reader.get(`/console/nodes/${theirs}`)).status).toBe(404);

    // Posting the form anyway: the API refuses it, the node stays as it was.
    await reader.post(`/console/nodes/${mine}/cordon`, { csrf: csrfOf(page) });
    expect((await reader.get(`/console/nodes/${mine}`)).html).toContain(
      'this key lacks compute:nodes:cordon',
    );
    expect((await nodeOf(mine)).cordoned).toBe(false);

    const cordoner = new Browser(server.base);
    const withCordon = await tenantKey(h, 'mine', ['compute:nodes:read', 'compute:nodes:cordon'], 'mine-ops');
    await cordoner.signIn(withCordon.secret);
    expect((await cordoner.get(`/console/nodes/${mine}`)).html).toContain(linkTo(mine, 'cordon'));
  });
});
