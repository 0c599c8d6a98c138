import { describe, expect, it } from 'vitest';
import { placeAllocation, readNode, seedPoolNode, setNode } from '../support/builders';
import { call, eventsOf, seedNode, seedPool } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { expectNodeRouteSecured } from '../support/security';

const h = useHarness({ worker: false });

describe('adopt again', () => {
  it('happy: an adopted node goes through adopting back to adopted when acceptance passes', async () => {
    const id = await seedPoolNode(h, 'pool-a');
    const reply = await call(h, 'POST', `/v1/nodes/${id}/adopt`, { body: { reason: 'new firmware' } });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ provisionState: 'adopted', version: 3 });
    expect((await eventsOf(h, id)).map((e) => [e.type, e.reason])).toEqual([
      ['node.adopting', 'new firmware'],
      ['node.adopted', 'new firmware'],
    ]);
  });

  it('happy: a node that fails acceptance stays adopting, out of placement, until it passes', async () => {
    const id = await seedPoolNode(h, 'pool-a');
    await setNode(h, id, { liveness: 'unreachable' });
    const stuck = await call(h, 'POST', `/v1/nodes/${id}/adopt`);
    // The check that failed is said: on the node, and in an event.
    expect(stuck.body).toMatchObject({
      provisionState: 'adopting',
      noScheduleReasons: ['acceptance:liveness'],
    });
    const refused = await placeAllocation(h, id);
    expect(refused.body.error.details.reasons).toEqual(['provisionState:adopting', 'acceptance:liveness']);
    const stillStuck = await call(h, 'POST', `/v1/nodes/${id}/adopt`);
    expect(stillStuck.body).toMatchObject({ provisionState: 'adopting', version: stuck.body.version });

    await setNode(h, id, { liveness: 'alive' });
    const passed = await call(h, 'POST', `/v1/nodes/${id}/adopt`);
    expect(passed.body).toMatchObject({ provisionState: 'adopted', noScheduleReasons: [] });
    expect((await eventsOf(h, id)).map((e) => [e.type, e.data.check, e.data.reason])).toEqual([
      ['node.adopting', undefined, undefined],
      ['node.acceptance.failed', 'liveness', 'liveness is unreachable'],
      ['node.adopted', undefined, undefined],
    ]);
  });

  it('error: any state but adopting or adopted is INVALID_STATE; a stale version conflicts', async () => {
    await seedPool(h, { id: 'pool-a', tenantId: 'acme' });
    for (const state of ['pending', 'rejected', 'failed', 'retired', 'purging'] as const) {
      const id = await seedNode(h, { poolId: 'pool-a', tenantId: 'acme', provisionState: state });
      const reply = await call(h, 'POST', `/v1/nodes/${id}/adopt`);
      expect(reply.status, state).toBe(409);
      expect(reply.body.error).toMatchObject({ code: 'INVALID_STATE', details: { provisionState: state } });
      expect(await eventsOf(h, id)).toEqual([]);
    }
    const id = await seedNode(h, { poolId: 'pool-a', tenantId: 'acme' });
    await call(h, 'POST', `/v1/nodes/${id}/cordon`);
    expect((await call(h, 'POST', `/v1/nodes/${id}/adopt`, { body: { version: 1 } })).status).toBe(409);
    expect((await readNode(h, id)).provisionState).toBe('adopted');
  });

  it('security: needs compute:nodes:provision on a visible node', async () => {
    await expectNodeRouteSecured(h, {
      method: 'POST',
      path: (id) => `/v1/nodes/${id}/adopt`,
      action: 'compute:nodes:provision',
    });
  });
});
