import { describe, expect, it } from 'vitest';
import { placeAllocation, readNode, seedPoolNode, setNode } from '../support/builders';
import { allocate, call, eventsOf, seedNode, seedPool, tenantKey } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { expectNodeRouteSecured } from '../support/security';

const h = useHarness({ worker: false });

describe('delete', () => {
  it('happy: tombstones a cordoned adopted node once; a retry answers deleted: false', async () => {
    const id = await seedPoolNode(h, 'pool-d');
    const alloc = await allocate(h, id, 'acme');
    await call(h, 'POST', `/v1/nodes/${id}/cordon`);
    await call(h, 'POST', `/v1/allocations/${alloc}/release`);

    const deleted = await call(h, 'DELETE', `/v1/nodes/${id}`, { body: { reason: 'TPM replaced' } });
    expect(deleted).toMatchObject({ status: 200, body: { nodeId: id, deleted: true } });
    const retry = await call(h, 'DELETE', `/v1/nodes/${id}`, { body: { reason: 'TPM replaced' } });
    expect(retry).toMatchObject({ status: 200, body: { nodeId: id, deleted: false } });
    expect(await eventsOf(h, id, 'node.deleted')).toMatchObject([{ reason: 'TPM replaced' }]);

    // Operators still read the tombstone and its history; lists leave it out unless asked.
    const node = await call(h, 'GET', `/v1/nodes/${id}`);
    expect(node.body.deletedAt).toEqual(expect.any(String));
    expect((await call(h, 'GET', '/v1/nodes?poolId=pool-d')).body.items).toEqual([]);
    const all = await call(h, 'GET', '/v1/nodes?poolId=pool-d&includeDeleted=true');
    expect(all.body.items.map((n: { id: string }) => n.id)).toEqual([id]);
    // No control applies to a deleted node, and placement refuses it.
    const cordon = await call(h, 'POST', `/v1/nodes/${id}/uncordon`);
    expect(cordon.body.error.code).toBe('INVALID_STATE');
    const placed = await placeAllocation(h, id);
    expect(placed.body.error.details.reasons).toContain('deleted');
    // For tenant keys it is gone.
    const key = await tenantKey(h, 'acme', ['compute:nodes:read', 'compute:nodes:delete'], 'acme-deleter');
    expect((await call(h, 'GET', `/v1/nodes/${id}`, { token: key.secret })).status).toBe(404);
    expect((await call(h, 'GET', `/v1/nodes/${id}/events`, { token: key.secret })).status).toBe(404);
    expect((await call(h, 'DELETE', `/v1/nodes/${id}`, { token: key.secret })).status).toBe(404);
  });

  it('happy: accepts retired, pending, enrolling, adopting, failed, rejected and purging nodes', async () => {
    await seedPool(h, { id: 'pool-d', tenantId: 'acme' });
    for (const state of [
      'retired',
      'pending',
      'enrolling',
      'adopting',
      'failed',
      'rejected',
      'purging',
    ] as const) {
      const id = await seedNode(h, { poolId: 'pool-d', tenantId: 'acme', provisionState: state });
      const reply = await call(h, 'DELETE', `/v1/nodes/${id}`);
      expect(reply.body, state).toEqual({ nodeId: id, deleted: true });
    }
  });

  it('error: an uncordoned adopted node is told to cordon first', async () => {
    const id = await seedPoolNode(h, 'pool-d');
    const reply = await call(h, 'DELETE', `/v1/nodes/${id}`);
    expect(reply.status).toBe(409);
    expect(reply.body.error).toMatchObject({
      code: 'INVALID_STATE',
      message: 'Cordon the adopted node first, then delete it once it holds nothing',
      details: { provisionState: 'adopted', cordoned: false },
    });
    expect((await readNode(h, id)).deletedAt).toBeNull();
  });

  it('error: open allocations are counted; decommissioning nodes are refused; stale versions conflict', async () => {
    const id = await seedPoolNode(h, 'pool-d');
    await allocate(h, id, 'acme');
    await allocate(h, id, 'acme', new Date(Date.now() + 60_000));
    await call(h, 'POST', `/v1/nodes/${id}/cordon`);
    const busy = await call(h, 'DELETE', `/v1/nodes/${id}`);
    expect(busy.status).toBe(409);
    expect(busy.body.error).toMatchObject({ code: 'INVALID_STATE', details: { openAllocations: 2 } });

    const decommissioning = await seedNode(h, {
      poolId: 'pool-d',
      tenantId: 'acme',
      provisionState: 'decommissioning',
    });
    const refused = await call(h, 'DELETE', `/v1/nodes/${decommissioning}`);
    expect(refused.body.error).toMatchObject({
      code: 'INVALID_STATE',
      details: { provisionState: 'decommissioning', cordoned: false },
    });

    const idle = await seedNode(h, { poolId: 'pool-d', tenantId: 'acme', provisionState: 'retired' });
    await setNode(h, idle, { version: 5 });
    expect((await call(h, 'DELETE', `/v1/nodes/${idle}`, { body: { version: 4 } })).status).toBe(409);
    expect((await call(h, 'DELETE', `/v1/nodes/${idle}`, { body: { reason: '' } })).status).toBe(400);
    for (const nodeId of [id, decommissioning, idle]) {
      expect((await readNode(h, nodeId)).deletedAt).toBeNull();
      expect(await eventsOf(h, nodeId, 'node.deleted')).toEqual([]);
    }
  });

  it('security: needs compute:nodes:delete on a visible node', async () => {
    await expectNodeRouteSecured(h, {
      method: 'DELETE',
      path: (id) => `/v1/nodes/${id}`,
      action: 'compute:nodes:delete',
    });
  });
});
