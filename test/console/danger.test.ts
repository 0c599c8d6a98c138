import { describe, expect, it } from 'vitest';
import { newId } from '../../domain/ids';
import { joinedPoolNode, readNode, setNode } from '../support/builders';
import { allocate, call, eventsOf, seedNode, seedPool, tenantKey } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { Browser, csrfOf, flashOf, unescapeHtml, useConsole, type Page } from './console-client';
import { hiddenFields, linkTo, openControl, sendControl, valueOf } from './node-page';

const h = useHarness();
const server = useConsole(h);

const operationsOf = async (nodeId: string, kind: string) =>
  (await call(h, 'GET', `/v1/operations?nodeId=${nodeId}&kind=${kind}`)).body.items as {
    id: string;
    status: string;
    actor: string;
  }[];
/** A hidden field of the page's form posting to `action`. */
function fieldOf(page: Page, action: string, name: string): string {
  const form = page.html.split(`action="${action}"`)[1]?.split('</form>')[0] ?? '';
  const match = new RegExp(`name="${name}" value="([^"]*)"`).exec(form);
  if (!match) throw new Error(`no field ${name} in the form of ${action}`);
  return unescapeHtml(match[1]!);
}

async function operator() {
  const browser = new Browser(server.base);
  await browser.signIn(h.operatorKey);
  return browser;
}

/** A node that may be decommissioned: adopted, its agent stopped (offline), holding nothing. */
async function stoppedNode(poolId: string, hostname: string) {
  await seedPool(h, { id: poolId, tenantId: 'acme' });
  const nodeId = await seedNode(h, { poolId, tenantId: 'acme', hostname });
  await setNode(h, nodeId, { liveness: 'offline', connectivity: 'disconnected' });
  return nodeId;
}

describe('the danger zone', () => {
  it('an operator sees it; a tenant key does not, and its POSTs to danger routes are refused by the API', async () => {
    await seedPool(h, { id: 'pool-dz', tenantId: 'dz' });
    const nodeId = await seedNode(h, { poolId: 'pool-dz', tenantId: 'dz', hostname: 'gpu-dz-1' });
    const op = await operator();
    const page = await op.get(`/console/nodes/${nodeId}`);
    expect(page.html).toContain('Danger zone');
    // A node that never sent a heartbeat says so, next to its liveness.
    expect(page.html).toContain('<span class="value">never (no heartbeat yet)</span>');
    expect(page.html).toContain(linkTo(nodeId, 'decommission'));
    expect(page.html).toContain(linkTo(nodeId, 'purge'));
    // The section nav reaches it.
    expect(page.html).toContain('<a href="#danger-zone">Danger zone</a>');

    const key = await tenantKey(h, 'dz', [
      'compute:nodes:read',
      'compute:nodes:cordon',
      'compute:nodes:update',
      'compute:nodes:delete',
    ]);
    const tenant = new Browser(server.base);
    await tenant.signIn(key.secret);
    const seen = await tenant.get(`/console/nodes/${nodeId}`);
    expect(seen.status).toBe(200);
    expect(seen.html).not.toContain('Danger zone');
    for (const control of ['decommission', 'purge', 'delete']) {
      expect(seen.html, control).not.toContain(`/console/nodes/${nodeId}/${control}"`);
    }
    // Posted anyway (a hand-made form): the API refuses, the node is unchanged.
    const before = await readNode(h, nodeId);
    const csrf = csrfOf(seen);
    const purged = await tenant.post(`/console/nodes/${nodeId}/purge`, {
      csrf,
      confirm: 'yes',
      hostname: 'gpu-dz-1',
    });
    expect(purged.status).toBe(303);
    expect(flashOf(await tenant.get(purged.location!))).toEqual([
      'error',
      expect.stringContaining('(FORBIDDEN)'),
    ]);
    const executed = await tenant.post(`/console/nodes/${nodeId}/decommission`, {
      csrf,
      confirm: 'gpu-dz-1',
      nodeGeneration: String(before.version),
      dependencyDigest: `sha256:${'0'.repeat(64)}`,
      operator: 'mallory',
      reason: 'x',
      idempotencyKey: 'console-decommission-tenant',
    });
    expect(executed.location).toBe(`/console/nodes/${nodeId}`);
    expect(flashOf(await tenant.get(executed.location!))).toEqual([
      'error',
      expect.stringMatching(/^Decommission refused: .*\(FORBIDDEN\)$/),
    ]);
    // The confirmation pages (and the preview) are not the tenant key's, even by URL and even with
    // compute:nodes:delete: the page any unknown path gets, as for everything else it cannot do.
    for (const control of ['decommission', 'purge', 'delete', 'revoke-identity']) {
      const shown = await tenant.get(`/console/nodes/${nodeId}/${control}`);
      expect(shown.status, control).toBe(404);
      expect(shown.html, control).toContain('Not found');
    }
    expect(await readNode(h, nodeId)).toMatchObject({ provisionState: 'adopted', version: before.version });
    expect(await operationsOf(nodeId, 'purge')).toEqual([]);
    expect(await operationsOf(nodeId, 'decommission')).toEqual([]);
  });

  it('decommission: the preview lists blockers, linked, and offers no execute while any remain', async () => {
    await seedPool(h, { id: 'pool-dc-blocked', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-dc-blocked', tenantId: 'acme', hostname: 'gpu-dcb-1' });
    const allocationId = await allocate(h, nodeId, 'acme');
    const op = await operator();
    const page = await op.get(`/console/nodes/${nodeId}/decommission`);
    expect(page.status).toBe(200);
    expect(page.html).toContain(
      `<a href="/console/nodes/${nodeId}#section-allocations"><code>${allocationId}</code></a>`,
    );
    expect(page.html).toContain(`href="/console/nodes/${nodeId}#live-axes"`);
    expect(page.html).toContain('Resolve the blockers above');
    expect(page.html).not.toContain(`action="/console/nodes/${nodeId}/decommission"`);
    // The anchors the links point at exist on the node page.
    const nodePage = await op.get(`/console/nodes/${nodeId}`);
    expect(nodePage.html).toContain('id="section-allocations"');
    expect(nodePage.html).toContain('id="live-axes"');
  });

  it('decommission: a wrong hostname changes nothing; a stale preview shows the new one; then it runs', async () => {
    const nodeId = await stoppedNode('pool-dc', 'gpu-dc-9');
    const op = await operator();
    const action = `/console/nodes/${nodeId}/decommission`;
    const first = await op.get(action);
    expect(first.html).toContain('Nothing blocks the decommission.');
    const form = (page: Page, confirm: string) => ({
      csrf: csrfOf(page),
      nodeGeneration: fieldOf(page, action, 'nodeGeneration'),
      dependencyDigest: fieldOf(page, action, 'dependencyDigest'),
      idempotencyKey: fieldOf(page, action, 'idempotencyKey'),
      operator: 'alice',
      reason: 'end of life',
      confirm,
    });

    // A typed hostname that does not match: no call, nothing changed, and the page says so, the
    // owner and reason kept as typed (only the hostname is to be typed again).
    const before = await readNode(h, nodeId);
    const eventsBefore = (await eventsOf(h, nodeId)).length;
    const refused = await op.post(action, form(first, 'gpu-dc-8'));
    expect(refused.status).toBe(400);
    expect(flashOf(refused)).toEqual([
      'error',
      expect.stringContaining('"gpu-dc-8" is not this node\'s hostname'),
    ]);
    expect(flashOf(refused)?.[1]).toContain('nothing was done');
    expect(fieldOf(refused, action, 'reason')).toBe('end of life');
    expect(fieldOf(refused, action, 'operator')).toBe('alice');
    expect(() => fieldOf(refused, action, 'confirm')).toThrow('no field confirm');
    expect(fieldOf(refused, action, 'idempotencyKey')).toBe(fieldOf(first, action, 'idempotencyKey'));
    expect(await readNode(h, nodeId)).toMatchObject({ provisionState: 'adopted', version: before.version });
    expect(await eventsOf(h, nodeId)).toHaveLength(eventsBefore);
    expect(await operationsOf(nodeId, 'decommission')).toEqual([]);

    // The node changes between preview and execute: the new preview, to confirm again.
    const stale = await op.get(action);
    const staleGeneration = fieldOf(stale, action, 'nodeGeneration');
    expect(
      (await call(h, 'POST', `/v1/nodes/${nodeId}/cordon`, { body: { reason: 'meanwhile' } })).status,
    ).toBe(200);
    let answer = await op.post(action, form(stale, 'gpu-dc-9'));
    expect(answer.location).toBe(action);
    let shown = await op.get(answer.location!);
    expect(flashOf(shown)).toEqual(['error', expect.stringContaining('gpu-dc-9 changed since the preview')]);
    expect(flashOf(shown)?.[1]).toContain('confirm again');
    const fresh = fieldOf(shown, action, 'nodeGeneration');
    expect(Number(fresh)).toBeGreaterThan(Number(staleGeneration));
    expect((await readNode(h, nodeId)).provisionState).toBe('adopted');
    expect(await eventsOf(h, nodeId, 'node.decommission')).toEqual([]);

    // Confirmed on the new preview: the decommission runs to its end, by the signed-in key.
    answer = await op.post(action, form(shown, 'gpu-dc-9'));
    expect(answer.location).toBe(`/console/nodes/${nodeId}`);
    shown = await op.get(answer.location!);
    expect(flashOf(shown)).toEqual([
      'ok',
      expect.stringMatching(
        /^gpu-dc-9: decommission requested as operation op_\w+ \(its progress is under Operations\)\.$/,
      ),
    ]);
    const [operation, ...more] = await operationsOf(nodeId, 'decommission');
    expect(more).toEqual([]);
    expect(operation!.actor).toBe('key:bootstrap-operator');
    await eventually(async () =>
      (await readNode(h, nodeId)).provisionState === 'decommissioned' ? true : undefined,
    );
    const done = await op.get(`/console/nodes/${nodeId}`);
    expect(done.html).toContain('No controls: the node is decommissioned.');
    expect(done.html).not.toContain('Danger zone');
  });

  it('purge: no call without its confirmation step; force is offered while the node holds allocations', async () => {
    await seedPool(h, { id: 'pool-purge', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-purge', tenantId: 'acme', hostname: 'gpu-pg-1' });
    const allocationId = await allocate(h, nodeId, 'acme');
    const op = await operator();
    const nodePage = await op.get(`/console/nodes/${nodeId}`);
    const confirmPath = `/console/nodes/${nodeId}/purge`;

    // A POST that skipped the confirmation page: nothing happens, the page asks to confirm.
    let answer = await op.post(confirmPath, { csrf: csrfOf(nodePage) });
    expect(answer.location).toBe(confirmPath);
    let shown = await op.get(confirmPath);
    expect(flashOf(shown)).toEqual(['error', expect.stringContaining('Purge needs its confirmation')]);
    expect(shown.html).toContain('cannot be undone');
    expect(shown.html).toContain('remove Drydock from the machine');
    expect(shown.html).toContain('name="force" value="yes"');
    expect(await operationsOf(nodeId, 'purge')).toEqual([]);

    // Confirmed without force: the API refuses (the node holds an allocation); the page says so.
    answer = await op.post(confirmPath, { csrf: csrfOf(shown), confirm: 'yes', hostname: 'gpu-pg-1' });
    expect(answer.location).toBe(confirmPath);
    shown = await op.get(confirmPath);
    expect(flashOf(shown)).toEqual(['error', expect.stringContaining('(INVALID_STATE)')]);
    expect((await readNode(h, nodeId)).provisionState).toBe('adopted');

    // With force: the allocation is released and the purge begins.
    answer = await op.post(confirmPath, {
      csrf: csrfOf(shown),
      confirm: 'yes',
      force: 'yes',
      reason: 'RMA',
      hostname: 'gpu-pg-1',
    });
    expect(answer.location).toBe(`/console/nodes/${nodeId}`);
    shown = await op.get(answer.location!);
    expect(flashOf(shown)).toEqual([
      'ok',
      expect.stringMatching(/^gpu-pg-1: purge requested as operation op_/),
    ]);
    expect((await readNode(h, nodeId)).provisionState).toBe('purging');
    expect(await eventsOf(h, nodeId, 'node.purge.requested')).toMatchObject([
      { actor: 'key:bootstrap-operator', reason: 'RMA' },
    ]);
    const allocation = (await call(h, 'GET', `/v1/allocations/${allocationId}`)).body;
    expect(allocation.releasedAt).not.toBeNull();
    // The purge's progress in words: waiting for the node to take its command.
    await eventually(async () => {
      const page = await op.get(`/console/nodes/${nodeId}`);
      return page.html.includes('Waiting for the node to take the purge command') ? page : undefined;
    });
  });

  it('purge: a mistyped hostname makes no call and keeps what was typed; the right one purges', async () => {
    await seedPool(h, { id: 'pool-purge-typed', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-purge-typed', tenantId: 'acme', hostname: 'gpu-pt-1' });
    await allocate(h, nodeId, 'acme');
    const op = await operator();
    const action = `/console/nodes/${nodeId}/purge`;
    const page = await openControl(op, nodeId, 'purge');
    expect(page.html).toContain('Type the hostname <code>gpu-pt-1</code> to confirm');
    const before = await readNode(h, nodeId);
    const eventsBefore = (await eventsOf(h, nodeId)).length;

    const refused = await sendControl(op, page, nodeId, 'purge', {
      hostname: 'gpu-pt-2',
      reason: 'RMA ticket 4411',
      force: 'yes',
    });
    expect(refused.status).toBe(400);
    expect(flashOf(refused)).toEqual([
      'error',
      expect.stringContaining('"gpu-pt-2" is not this node\'s hostname'),
    ]);
    expect(flashOf(refused)?.[1]).toContain('nothing was done');
    // The reason and the force as typed; the hostname to be typed again.
    expect(valueOf(refused, action, 'reason')).toBe('RMA ticket 4411');
    expect(refused.html).toMatch(/name="force" value="yes" checked=""/);
    expect(() => valueOf(refused, action, 'hostname')).toThrow('no field hostname');
    expect(hiddenFields(refused, action)).toMatchObject({ confirm: 'yes' });
    expect(await readNode(h, nodeId)).toMatchObject({ provisionState: 'adopted', version: before.version });
    expect(await eventsOf(h, nodeId)).toHaveLength(eventsBefore);
    expect(await operationsOf(nodeId, 'purge')).toEqual([]);

    const answer = await sendControl(op, refused, nodeId, 'purge', {
      hostname: 'gpu-pt-1',
      reason: valueOf(refused, action, 'reason'),
      force: 'yes',
    });
    expect(answer.location).toBe(`/console/nodes/${nodeId}`);
    expect((await readNode(h, nodeId)).provisionState).toBe('purging');
    expect(await eventsOf(h, nodeId, 'node.purge.requested')).toMatchObject([{ reason: 'RMA ticket 4411' }]);
  });

  it('delete: "cordon first" while adopted and not cordoned; then a confirmation step deletes it', async () => {
    await seedPool(h, { id: 'pool-del', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-del', tenantId: 'acme', hostname: 'gpu-del-1' });
    const op = await operator();
    let page = await op.get(`/console/nodes/${nodeId}`);
    expect(page.html).toContain('cordon first');
    expect(page.html).not.toContain(linkTo(nodeId, 'delete'));

    await call(h, 'POST', `/v1/nodes/${nodeId}/cordon`, { body: {} });
    page = await op.get(`/console/nodes/${nodeId}`);
    expect(page.html).not.toContain('cordon first');
    expect(page.html).toContain(linkTo(nodeId, 'delete'));
    const confirm = await op.get(`/console/nodes/${nodeId}/delete`);
    expect(confirm.html).toContain('cannot be undone');
    const answer = await op.post(`/console/nodes/${nodeId}/delete`, {
      csrf: csrfOf(confirm),
      confirm: 'yes',
      version: fieldOf(confirm, `/console/nodes/${nodeId}/delete`, 'version'),
      reason: 'gone',
    });
    expect(answer.location).toBe('/console');
    expect(flashOf(await op.get('/console'))).toEqual(['ok', `Node ${nodeId} deleted.`]);
    expect(await eventsOf(h, nodeId, 'node.deleted')).toMatchObject([
      { actor: 'key:bootstrap-operator', reason: 'gone' },
    ]);
    const after = await call(h, 'GET', `/v1/nodes/${nodeId}`);
    expect(after.status === 404 || after.body.deletedAt !== null, JSON.stringify(after)).toBe(true);
  });

  it('CSRF missing is 403 and changes nothing; bad ids are the 404 page', async () => {
    const nodeId = await stoppedNode('pool-dz-csrf', 'gpu-csrf-1');
    const op = await operator();
    const page = await op.get(`/console/nodes/${nodeId}/purge`);
    for (const control of ['purge', 'delete', 'decommission', 'revoke-identity', 'adopt', 'remediate']) {
      const answer = await op.post(`/console/nodes/${nodeId}/${control}`, {
        confirm: 'yes',
        condition: 'GpuXidError',
      });
      expect(answer.status, control).toBe(403);
    }
    expect(await readNode(h, nodeId)).toMatchObject({ provisionState: 'adopted', version: 1 });
    expect(await eventsOf(h, nodeId)).toEqual([]);

    const csrf = csrfOf(page);
    for (const path of ['decommission', 'purge', 'delete', 'revoke-identity']) {
      expect((await op.get(`/console/nodes/node_1/${path}`)).status, path).toBe(404);
      expect((await op.post(`/console/nodes/node_1/${path}`, { csrf, confirm: 'yes' })).status, path).toBe(
        404,
      );
      expect((await op.get(`/console/nodes/../${path}`)).status, path).toBe(404);
    }
    // An id of the right shape that no node has: the API's 404, as the 404 page.
    const missing = newId('node');
    for (const path of ['decommission', 'purge', 'delete']) {
      expect((await op.get(`/console/nodes/${missing}/${path}`)).status, path).toBe(404);
    }
    const refused = await op.post(`/console/nodes/${missing}/decommission`, { csrf, confirm: 'x' });
    expect(refused.status).toBe(404);
    expect(refused.html).toContain('Not found');
    // A control that has no page (a label is set in its section of the node page) has none by URL.
    expect((await op.get(`/console/nodes/${nodeId}/label`)).status).toBe(404);
  });
});

describe('adopt, revoke identity, remediate', () => {
  it('adopt is offered to an adopting node and makes it adopted once acceptance passes', async () => {
    await seedPool(h, { id: 'pool-adopt', tenantId: 'acme' });
    const nodeId = await seedNode(h, {
      poolId: 'pool-adopt',
      tenantId: 'acme',
      hostname: 'gpu-ad-1',
      provisionState: 'adopting',
    });
    const op = await operator();
    const page = await openControl(op, nodeId, 'adopt');
    expect(page.html).toContain('takes no new work');
    const answer = await sendControl(op, page, nodeId, 'adopt');
    const shown = await op.get(answer.location!);
    expect(flashOf(shown)).toEqual(['ok', 'gpu-ad-1 adopted.']);
    expect((await readNode(h, nodeId)).provisionState).toBe('adopted');
    expect(await eventsOf(h, nodeId, 'node.adopted')).toMatchObject([{ actor: 'key:bootstrap-operator' }]);
    // A pending node is not adopted by this control: no form.
    const pending = await seedNode(h, { poolId: 'pool-adopt', provisionState: 'pending' });
    expect((await op.get(`/console/nodes/${pending}`)).html).not.toContain(
      `/console/nodes/${pending}/adopt"`,
    );
  });

  it("a key of the pool's owner is offered revoke identity; a grantee's key with the same actions is not, even by URL", async () => {
    await seedPool(h, { id: 'pool-granted', tenantId: 'owner-co', grants: ['guest-co'] });
    const nodeId = await seedNode(h, { poolId: 'pool-granted', tenantId: 'owner-co', hostname: 'gpu-gr-1' });
    const actions = ['compute:nodes:read', 'compute:nodes:cordon', 'compute:nodes:revoke-identity'] as const;
    const owner = new Browser(server.base);
    await owner.signIn((await tenantKey(h, 'owner-co', [...actions])).secret);
    const guest = new Browser(server.base);
    await guest.signIn((await tenantKey(h, 'guest-co', [...actions])).secret);

    const ownerPage = await owner.get(`/console/nodes/${nodeId}`);
    expect(ownerPage.html).toContain(linkTo(nodeId, 'revoke-identity'));
    expect(ownerPage.html).toContain(linkTo(nodeId, 'cordon'));
    expect((await owner.get(`/console/nodes/${nodeId}/revoke-identity`)).status).toBe(200);

    // The guest sees the node (it may place work there) and none of its controls.
    const guestPage = await guest.get(`/console/nodes/${nodeId}`);
    expect(guestPage.status).toBe(200);
    expect(guestPage.html).toContain('gpu-gr-1');
    expect(guestPage.html).not.toContain(`/console/nodes/${nodeId}/revoke-identity"`);
    expect(guestPage.html).not.toContain(`/console/nodes/${nodeId}/cordon"`);
    const confirmation = await guest.get(`/console/nodes/${nodeId}/revoke-identity`);
    expect(confirmation.status).toBe(404);
    // Posted anyway: the API refuses the grantee, and nothing changes.
    const posted = await guest.post(`/console/nodes/${nodeId}/revoke-identity`, {
      csrf: csrfOf(guestPage),
      confirm: 'yes',
    });
    expect(flashOf(await guest.get(posted.location!))).toEqual([
      'error',
      expect.stringContaining('(FORBIDDEN)'),
    ]);
    expect(await readNode(h, nodeId)).toMatchObject({ identityGeneration: 1, version: 1 });
    expect(await eventsOf(h, nodeId)).toEqual([]);
  });

  it('revoke identity only through its confirmation page: every certificate revoked, the generation raised', async () => {
    const { nodeId } = await joinedPoolNode(h, 'pool-revoke');
    const { hostname } = await readNode(h, nodeId);
    const op = await operator();
    const page = await op.get(`/console/nodes/${nodeId}`);
    expect(page.html).toContain(linkTo(nodeId, 'revoke-identity'));
    // Without the confirmation: nothing.
    let answer = await op.post(`/console/nodes/${nodeId}/revoke-identity`, { csrf: csrfOf(page) });
    expect(answer.location).toBe(`/console/nodes/${nodeId}/revoke-identity`);
    let shown = await op.get(answer.location!);
    expect(shown.html).toContain('must join again');
    expect(await eventsOf(h, nodeId, 'security.node.identity-revoked')).toEqual([]);

    answer = await op.post(`/console/nodes/${nodeId}/revoke-identity`, {
      csrf: csrfOf(shown),
      confirm: 'yes',
      reason: 'key leaked',
    });
    shown = await op.get(answer.location!);
    expect(flashOf(shown)).toEqual(['ok', `${hostname}: identity revoked (1 certificate).`]);
    expect(await eventsOf(h, nodeId, 'security.node.identity-revoked')).toMatchObject([
      { actor: 'key:bootstrap-operator', reason: 'key leaked', data: { identityGeneration: 2 } },
    ]);
  });

  it("remediate offers the node's true conditions and starts one remediation of the chosen one", async () => {
    await seedPool(h, { id: 'pool-rem', tenantId: 'acme' });
    const nodeId = await seedNode(h, { poolId: 'pool-rem', tenantId: 'acme', hostname: 'gpu-rm-1' });
    const since = new Date().toISOString();
    await setNode(h, nodeId, {
      conditions: [
        { type: 'GpuXidError', status: true, reason: 'xid 79', since },
        { type: 'DiskPressure', status: false, reason: null, since },
      ],
    });
    const op = await operator();
    const page = await openControl(op, nodeId, 'remediate');
    expect(page.html).toContain('<option value="GpuXidError">');
    expect(page.html).not.toContain('<option value="DiskPressure">');
    expect(page.html).toContain('It holds no live allocation: no work is interrupted.');
    const answer = await sendControl(op, page, nodeId, 'remediate', {
      condition: 'GpuXidError',
      reason: 'operator saw it',
    });
    const shown = await op.get(answer.location!);
    expect(flashOf(shown)).toEqual([
      'ok',
      expect.stringMatching(
        /^Remediation of GpuXidError requested as operation op_[0-9a-z]{26} \(its progress is under Operations\)\.$/,
      ),
    ]);
    const operations = await operationsOf(nodeId, 'remediation');
    expect(operations).toHaveLength(1);
    expect(operations[0]!.actor).toBe('key:bootstrap-operator');
    // A condition type the API refuses: its message, no second operation.
    const bad = await sendControl(op, page, nodeId, 'remediate', { condition: '9 bad' });
    expect(flashOf(await op.get(bad.location!))).toEqual([
      'error',
      expect.stringContaining('(INVALID_INPUT)'),
    ]);
    expect(await operationsOf(nodeId, 'remediation')).toHaveLength(1);
    await call(h, 'DELETE', `/v1/operations/${operations[0]!.id}`, { body: {} });
  });
});
