import { describe, expect, it } from 'vitest';
import { newId } from '../../domain/ids';
import { allocate, call, seedNode, seedPool, tenantKey } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';

const h = useHarness();

describe('operations', () => {
  it('reads an operation with its progress, lists and filters them, and hides foreign ones', async () => {
    await seedPool(h, { id: 'pool-o', tenantId: 'acme' });
    await seedPool(h, { id: 'pool-p', tenantId: 'globex' });
    const nodeId = await seedNode(h, { poolId: 'pool-o', tenantId: 'acme' });
    const foreign = await seedNode(h, { poolId: 'pool-p', tenantId: 'globex' });
    await allocate(h, nodeId, 'acme');
    const drain = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`, { body: { reason: 'swap fans' } });
    const other = await call(h, 'POST', `/v1/nodes/${foreign}/drain`);
    const opId = drain.body.operation.id as string;

    const op = await eventually(async () => {
      const reply = await call(h, 'GET', `/v1/operations/${opId}`);
      return reply.body.progress?.phase === 'waiting' ? reply.body : undefined;
    });
    expect(op).toMatchObject({
      id: opId,
      kind: 'drain',
      status: 'running',
      actor: 'key:bootstrap-operator',
      reason: 'swap fans',
    });
    expect(op.progress).toMatchObject({
      kind: 'drain',
      phase: 'waiting',
      waitingFor: { allocations: 1, items: [{ id: expect.any(String), endsAt: null }] },
      deadline: null,
      nextCheckAt: expect.any(String),
      startedAt: expect.any(String),
    });

    const list = await call(h, 'GET', `/v1/operations?nodeId=${nodeId}&kind=drain&status=running`);
    expect(list.body.items.map((o: { id: string }) => o.id)).toEqual([opId]);
    // By pool: the operations of nodes that were in it, none of another pool's.
    const inPool = await call(h, 'GET', '/v1/operations?poolId=pool-o');
    expect(inPool.body.items.map((o: { id: string }) => o.id)).toEqual([opId]);
    // The foreign node held nothing: its drain finished, and shows under succeeded only.
    const succeeded = await eventually(async () => {
      const reply = await call(h, 'GET', '/v1/operations?status=succeeded&kind=drain');
      const ids = reply.body.items.map((o: { id: string }) => o.id);
      return ids.includes(other.body.operation.id) ? ids : undefined;
    });
    expect(succeeded).not.toContain(opId);

    const key = await tenantKey(h, 'acme', ['compute:nodes:read'], 'acme-ops-reader');
    expect((await call(h, 'GET', `/v1/operations/${opId}`, { token: key.secret })).status).toBe(200);
    expect(
      (await call(h, 'GET', `/v1/operations/${other.body.operation.id}`, { token: key.secret })).status,
    ).toBe(404);
    const visible = await call(h, 'GET', '/v1/operations', { token: key.secret });
    expect(visible.body.items.map((o: { id: string }) => o.id)).toEqual([opId]);
    const noRead = await tenantKey(h, 'acme', ['compute:nodes:cordon'], 'acme-cordoner');
    expect((await call(h, 'GET', `/v1/operations/${opId}`, { token: noRead.secret })).status).toBe(403);
  });

  it('pages newest first and validates input', async () => {
    await seedPool(h, { id: 'pool-q', tenantId: 'acme' });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const nodeId = await seedNode(h, { poolId: 'pool-q', tenantId: 'acme' });
      ids.push((await call(h, 'POST', `/v1/nodes/${nodeId}/drain`)).body.operation.id);
    }
    const first = await call(h, 'GET', '/v1/operations?limit=2');
    const second = await call(h, 'GET', `/v1/operations?limit=2&cursor=${first.body.nextCursor}`);
    const seen = [...first.body.items, ...second.body.items].map((o: { id: string }) => o.id);
    expect(seen.slice(0, 3)).toEqual([...ids].reverse());
    for (const path of [
      '/v1/operations/op_1',
      '/v1/operations?kind=reboot',
      '/v1/operations?status=done',
      '/v1/operations?limit=500',
      '/v1/operations?nodeId=n1',
      '/v1/operations?poolId=Pool_Q',
    ]) {
      expect((await call(h, 'GET', path)).status, path).toBe(400);
    }
    expect((await call(h, 'GET', `/v1/operations/${newId('op')}`)).status).toBe(404);
    expect((await call(h, 'GET', `/v1/operations/${ids[0]}`, { token: null })).status).toBe(401);
  });
});
