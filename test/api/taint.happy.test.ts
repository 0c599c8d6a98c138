import { describe, expect, it } from 'vitest';
import { placeAllocation, seedPoolNode, setNode } from '../support/builders';
import { allocate, call, eventsOf, seedNode, seedPool } from '../support/fixtures';
import { useHarness } from '../support/harness';

const h = useHarness({ worker: false });

describe('taint: happy paths', () => {
  it('adds and removes operator taints as taint:<key>, one event with both lists', async () => {
    const id = await seedPoolNode(h, 'pool-t');
    const added = await call(h, 'POST', `/v1/nodes/${id}/taint`, {
      body: { add: ['rma-pending', 'burn-in', 'gpu.xid/79=true:now'], reason: 'RMA opened' },
    });
    expect(added.status).toBe(200);
    expect(added.body).toMatchObject({
      noScheduleReasons: ['taint:rma-pending', 'taint:burn-in', 'taint:gpu.xid/79=true:now'],
      version: 2,
      cordoned: false,
    });
    const swapped = await call(h, 'POST', `/v1/nodes/${id}/taint`, {
      body: { add: ['rma-shipped'], remove: ['burn-in'] },
    });
    expect(swapped.body.noScheduleReasons).toEqual([
      'taint:rma-pending',
      'taint:gpu.xid/79=true:now',
      'taint:rma-shipped',
    ]);
    expect(swapped.body.version).toBe(3);
    const events = await eventsOf(h, id);
    expect(events.map((e) => [e.type, e.data])).toEqual([
      ['node.tainted', { added: ['rma-pending', 'burn-in', 'gpu.xid/79=true:now'], removed: [] }],
      ['node.tainted', { added: ['rma-shipped'], removed: ['burn-in'] }],
    ]);
    expect(events[0]?.reason).toBe('RMA opened');
  });

  it('changes nothing when every key is already as asked', async () => {
    const id = await seedPoolNode(h, 'pool-t');
    await call(h, 'POST', `/v1/nodes/${id}/taint`, { body: { add: ['rma'] } });
    const again = await call(h, 'POST', `/v1/nodes/${id}/taint`, {
      body: { add: ['rma', 'rma'], remove: ['never-there'] },
    });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ version: 2, noScheduleReasons: ['taint:rma'] });
    expect(await eventsOf(h, id)).toHaveLength(1);
  });

  it('moves only operator taints: draining, unreachable and conditions stay', async () => {
    const id = await seedPoolNode(h, 'pool-t');
    await setNode(h, id, {
      noScheduleReasons: ['draining', 'unreachable', 'condition:GpuXidError', 'taint:rma'],
    });
    const reply = await call(h, 'POST', `/v1/nodes/${id}/taint`, {
      body: { remove: ['draining', 'unreachable', 'condition:GpuXidError', 'rma'] },
    });
    expect(reply.body.noScheduleReasons).toEqual(['draining', 'unreachable', 'condition:GpuXidError']);
    expect(await eventsOf(h, id)).toMatchObject([
      { type: 'node.tainted', data: { added: [], removed: ['rma'] } },
    ]);
  });

  it('a dedication keeps other tenants off the node, but not its tenant', async () => {
    await seedPool(h, { id: 'pool-shared', tenantId: 'acme', grants: ['globex'] });
    const id = await seedNode(h, { poolId: 'pool-shared', tenantId: 'acme' });
    await call(h, 'POST', `/v1/nodes/${id}/taint`, { body: { add: ['dedicated=acme'] } });
    expect(await allocate(h, id, 'acme')).toMatch(/^alloc_/);
    const other = await placeAllocation(h, id, 'globex');
    expect(other.status).toBe(409);
    expect(other.body.error).toMatchObject({
      code: 'NOT_SCHEDULABLE',
      details: { reasons: ['taint:dedicated=acme'] },
    });

    // Any other reason with the dedication blocks its tenant too; so do two dedications.
    await call(h, 'POST', `/v1/nodes/${id}/taint`, { body: { add: ['burn-in'] } });
    const blocked = await placeAllocation(h, id);
    expect(blocked.body.error.details.reasons).toEqual(['taint:dedicated=acme', 'taint:burn-in']);
    await call(h, 'POST', `/v1/nodes/${id}/taint`, {
      body: { add: ['dedicated=globex'], remove: ['burn-in'] },
    });
    for (const tenantId of ['acme', 'globex']) {
      const reply = await placeAllocation(h, id, tenantId);
      expect(reply.status, tenantId).toBe(409);
    }
  });
});
