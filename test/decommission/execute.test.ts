import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { newId } from '../../domain/ids';
import {
  accelerators,
  allocations,
  artifactCopies,
  inventoryCurrent,
  inventorySnapshots,
  nodes,
  operations,
  schedulerEntries,
  storageRoots,
  telemetryCurrent,
} from '../../db/schema';
import { join } from '../support/agents';
import { decommissioned, execute, preview, retiredNode } from '../support/decommission';
import { heartbeat, placeAllocation, readNode, setNode } from '../support/builders';
import { allocate, call, eventsOf, seedPool } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { recordHistory } from '../support/histories';
import { decommissionWorkflowId } from '../../workflows/definitions';

const h = useHarness();

describe('decommission: the runbook Confirm list', () => {
  it('decommissions a stopped node and every Confirm item holds', async () => {
    await seedPool(h, { id: 'pool-eol', tenantId: 'acme' });
    const { nodeId, credential, hostname } = await retiredNode(h, 'pool-eol', 'gpu-b7-03');
    // History: a past allocation and an artifact copy that exists elsewhere too.
    const tokenForOther = await call(h, 'POST', '/v1/tokens', {
      body: { poolId: 'pool-eol', ttl: '1h', maxUses: 0 },
    });
    const other = await join(h, { token: tokenForOther.body.secret });
    await h.db
      .insert(allocations)
      .values({ id: newId('alloc'), nodeId, tenantId: 'acme', kind: 'job', releasedAt: new Date() });
    await h.db.insert(artifactCopies).values([
      { id: newId('art'), artifactId: 'weights-70b', nodeId, path: '/data/w' },
      { id: newId('art'), artifactId: 'weights-70b', nodeId: other.body.nodeId, path: '/data/w' },
    ]);

    const p = (await preview(h, nodeId)).body;
    expect(p).toMatchObject({
      nodeId,
      hostname,
      ready: true,
      blockers: [],
      confirmationIdentities: [nodeId, hostname],
    });
    expect(p.cleanup).toEqual(
      expect.arrayContaining([
        { kind: 'credentials', count: 1 },
        { kind: 'accelerators', count: 2 },
        { kind: 'storage-roots', count: 1 },
        { kind: 'scheduler-rows', count: 1 },
        { kind: 'telemetry-rows', count: 1 },
        { kind: 'inventory-current-rows', count: 1 },
      ]),
    );
    expect(p.retained).toEqual(
      expect.arrayContaining([
        { kind: 'allocations', count: 1 },
        { kind: 'inventory-snapshots', count: 1 },
      ]),
    );

    const started = await execute(
      h,
      nodeId,
      {
        confirm: hostname,
        nodeGeneration: p.nodeGeneration,
        dependencyDigest: p.dependencyDigest,
        operator: 'alice',
        reason: 'EOL: PSU and board end of life',
      },
      'eol-gpu-b7-03-0001',
    );
    expect(started.status).toBe(202);
    // Recorded, not yet begun: a worker's dispatcher starts its workflow after the answer.
    expect(started.body).toMatchObject({
      kind: 'decommission',
      status: 'pending',
      nodeId,
      idempotencyKey: 'eol-gpu-b7-03-0001',
      progress: { phase: 'waiting-for-worker' },
    });
    expect(await decommissioned(h, nodeId, started.body.id)).toBe('decommissioned');
    expect((await call(h, 'GET', `/v1/operations/${started.body.id}`)).body).toMatchObject({
      status: 'succeeded',
      progress: { phase: 'decommissioned' },
    });
    await recordHistory(h.temporal, decommissionWorkflowId(nodeId), 'decommission');

    // Node status and liveness decommissioned; all eligibility false; current inventory empty.
    const node = await readNode(h, nodeId);
    expect(node).toMatchObject({
      provisionState: 'decommissioned',
      liveness: 'decommissioned',
      cordoned: true,
      access: 'blocked',
    });
    const placed = await placeAllocation(h, nodeId);
    expect(placed.status).toBe(409);
    expect(await h.db.select().from(inventoryCurrent).where(eq(inventoryCurrent.nodeId, nodeId))).toEqual([]);
    // Old credentials 401; re-enrollment with the old identity refused.
    expect((await heartbeat(h, credential)).status).toBe(401);
    const [cert] = await h.db.execute<{ public_key: string }>(
      sql`select public_key from node_certificates where node_id = ${nodeId}`,
    );
    const again = await call(h, 'POST', '/v1/agent/join', {
      token: null,
      body: { token: tokenForOther.body.secret, hostname, publicKey: cert!.public_key },
    });
    expect(again.status).toBe(401);
    // Scheduler and current telemetry rows gone; accelerators decommissioned; storage read-only.
    expect(await h.db.select().from(schedulerEntries).where(eq(schedulerEntries.nodeId, nodeId))).toEqual([]);
    expect(await h.db.select().from(telemetryCurrent).where(eq(telemetryCurrent.nodeId, nodeId))).toEqual([]);
    const accs = await h.db.select().from(accelerators).where(eq(accelerators.nodeId, nodeId));
    expect(accs.map((a) => a.state)).toEqual(['decommissioned', 'decommissioned']);
    const roots = await h.db.select().from(storageRoots).where(eq(storageRoots.nodeId, nodeId));
    expect(roots.map((r) => r.state)).toEqual(['read_only']);
    // History still reads back.
    expect(
      await h.db.select().from(inventorySnapshots).where(eq(inventorySnapshots.nodeId, nodeId)),
    ).toHaveLength(1);
    expect(await h.db.select().from(allocations).where(eq(allocations.nodeId, nodeId))).toHaveLength(1);
    expect((await eventsOf(h, nodeId)).length).toBeGreaterThan(2);
    // Exactly one node.decommissioned event and one operation.
    const audit = await eventsOf(h, nodeId, 'node.decommissioned');
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      actor: 'key:bootstrap-operator',
      reason: 'EOL: PSU and board end of life',
      operationId: started.body.id,
      data: { operator: 'alice', nodeGeneration: p.nodeGeneration, dependencyDigest: p.dependencyDigest },
    });
    const ops = await h.db.select().from(operations).where(eq(operations.nodeId, nodeId));
    expect(ops.filter((o) => o.kind === 'decommission').map((o) => o.status)).toEqual(['succeeded']);

    // The invariant: no control moves it, and the database refuses even a direct update.
    for (const [method, path, body] of [
      ['POST', `/v1/nodes/${nodeId}/uncordon`, {}],
      ['POST', `/v1/nodes/${nodeId}/unblock`, {}],
      ['POST', `/v1/nodes/${nodeId}/adopt`, {}],
      ['POST', `/v1/nodes/${nodeId}/taint`, { add: ['x'] }],
      ['DELETE', `/v1/nodes/${nodeId}`, {}],
      ['POST', `/v1/nodes/${nodeId}/drain`, {}],
    ] as const) {
      const reply = await call(h, method, path, { body });
      expect(reply.status, path).toBe(409);
      expect(reply.body.error.code, path).toBe('INVALID_STATE');
    }
    await expect(
      h.db.update(nodes).set({ provisionState: 'adopted' }).where(eq(nodes.id, nodeId)),
    ).rejects.toThrow();
    const direct = await h.db
      .execute(sql`update nodes set liveness = 'alive' where id = ${nodeId}`)
      .catch((e: Error) => e);
    expect(String((direct as Error).cause)).toMatch(/decommissioned_nodes_are_terminal/);

    // Repeating the completed request is safe: the same operation, 200, no new event.
    const repeat = await execute(
      h,
      nodeId,
      {
        confirm: hostname,
        nodeGeneration: p.nodeGeneration,
        dependencyDigest: p.dependencyDigest,
        operator: 'alice',
        reason: 'EOL: PSU and board end of life',
      },
      'eol-gpu-b7-03-0001',
    );
    expect(repeat.status).toBe(200);
    expect(repeat.body.id).toBe(started.body.id);
    expect(await eventsOf(h, nodeId, 'node.decommissioned')).toHaveLength(1);
  });
});

describe('decommission: idempotency', () => {
  it('20 racing requests with one key and one body get one operation and one event', async () => {
    await seedPool(h, { id: 'pool-race', tenantId: 'acme' });
    const { nodeId, hostname } = await retiredNode(h, 'pool-race');
    const p = (await preview(h, nodeId)).body;
    const body = {
      confirm: hostname,
      nodeGeneration: p.nodeGeneration,
      dependencyDigest: p.dependencyDigest,
      operator: 'bob',
      reason: 'EOL',
    };
    const replies = await Promise.all(
      Array.from({ length: 20 }, () => execute(h, nodeId, body, 'race-key-000001')),
    );
    expect(replies.filter((r) => r.status === 202)).toHaveLength(1);
    expect(replies.filter((r) => r.status === 200)).toHaveLength(19);
    expect(new Set(replies.map((r) => r.body.id)).size).toBe(1);
    expect(await decommissioned(h, nodeId, replies[0]!.body.id)).toBe('decommissioned');
    expect(await eventsOf(h, nodeId, 'node.decommissioned')).toHaveLength(1);
    const ops = await h.db.select().from(operations).where(eq(operations.nodeId, nodeId));
    expect(ops.filter((o) => o.kind === 'decommission')).toHaveLength(1);

    const different = await execute(h, nodeId, { ...body, reason: 'another reason' }, 'race-key-000001');
    expect(different.status).toBe(422);
    expect(different.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });
});

describe('decommission: blockers and conflicts', () => {
  it('names every blocker with its kind and id, and execute refuses with INVALID_STATE', async () => {
    await seedPool(h, { id: 'pool-b', tenantId: 'acme' });
    const { nodeId, hostname } = await retiredNode(h, 'pool-b');
    const alloc = await allocate(h, nodeId, 'acme');
    await h.db
      .insert(artifactCopies)
      .values({ id: newId('art'), artifactId: 'dataset-only-here', nodeId, path: '/data/d' });
    const drain = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`, { body: { reason: 'before EOL' } });
    const p = (await preview(h, nodeId)).body;
    expect(p.ready).toBe(false);
    expect(p.blockers.map((b: { kind: string; id: string }) => [b.kind, b.id])).toEqual(
      expect.arrayContaining([
        ['allocation', alloc],
        ['artifact', 'dataset-only-here'],
        ['operation', drain.body.operation.id],
      ]),
    );
    const refused = await execute(h, nodeId, {
      confirm: hostname,
      nodeGeneration: p.nodeGeneration,
      dependencyDigest: p.dependencyDigest,
      operator: 'alice',
      reason: 'EOL',
    });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'INVALID_STATE' });
    expect(refused.body.error.details.blockers).toHaveLength(3);
    expect((await readNode(h, nodeId)).provisionState).toBe('adopted');
    expect(await eventsOf(h, nodeId, 'node.decommissioned')).toEqual([]);
  });

  it('a running agent, a purging node and a deleted node are blockers', async () => {
    await seedPool(h, { id: 'pool-b2', tenantId: 'acme' });
    const token = await call(h, 'POST', '/v1/tokens', { body: { poolId: 'pool-b2', ttl: '1h', maxUses: 0 } });
    const alive = await join(h, { token: token.body.secret });
    expect((await preview(h, alive.body.nodeId)).body.blockers).toMatchObject([
      { kind: 'liveness', id: alive.body.nodeId },
    ]);
    const purging = await retiredNode(h, 'pool-b2');
    await setNode(h, purging.nodeId, { provisionState: 'purging' });
    expect((await preview(h, purging.nodeId)).body.blockers).toMatchObject([
      { kind: 'state', message: 'the node is purging' },
    ]);
    const deleted = await retiredNode(h, 'pool-b2');
    await call(h, 'POST', `/v1/nodes/${deleted.nodeId}/cordon`);
    await call(h, 'DELETE', `/v1/nodes/${deleted.nodeId}`);
    expect((await preview(h, deleted.nodeId)).body.blockers).toMatchObject([
      { kind: 'state', message: 'the node is deleted' },
    ]);
  });

  it('a changed generation or digest is CONFLICT; confirm must match an identity exactly', async () => {
    await seedPool(h, { id: 'pool-c', tenantId: 'acme' });
    const { nodeId, hostname } = await retiredNode(h, 'pool-c', 'gpu-c-01');
    const p = (await preview(h, nodeId)).body;
    const body = {
      confirm: hostname,
      nodeGeneration: p.nodeGeneration,
      dependencyDigest: p.dependencyDigest,
      operator: 'alice',
      reason: 'EOL',
    };
    await call(h, 'POST', `/v1/nodes/${nodeId}/label`, { body: { set: { rack: 'c1' } } });
    const generation = await execute(h, nodeId, body, 'conflict-key-0001');
    expect(generation.status).toBe(409);
    expect(generation.body.error).toMatchObject({
      code: 'CONFLICT',
      details: { nodeGeneration: p.nodeGeneration + 1 },
    });

    const fresh = (await preview(h, nodeId)).body;
    await h.db.insert(accelerators).values({ id: newId('acc'), nodeId, model: 'H100', serial: 'GPU-9999' });
    const same = (await preview(h, nodeId)).body;
    expect(same.nodeGeneration).toBe(fresh.nodeGeneration);
    expect(same.dependencyDigest).not.toBe(fresh.dependencyDigest);
    const digest = await execute(
      h,
      nodeId,
      { ...body, nodeGeneration: fresh.nodeGeneration, dependencyDigest: fresh.dependencyDigest },
      'conflict-key-0002',
    );
    expect(digest.status).toBe(409);
    expect(digest.body.error.code).toBe('CONFLICT');

    for (const confirm of ['GPU-C-01', 'gpu-c-01 ', 'gpu-c', nodeId.toUpperCase()]) {
      const reply = await execute(
        h,
        nodeId,
        { ...body, confirm, nodeGeneration: same.nodeGeneration, dependencyDigest: same.dependencyDigest },
        `confirm-key-${confirm.length}x`,
      );
      expect(reply.status, confirm).toBe(400);
      expect(reply.body.error.details.confirmationIdentities).toEqual([nodeId, 'gpu-c-01']);
    }
    expect((await readNode(h, nodeId)).provisionState).toBe('adopted');
    const ops = await h.db.select().from(operations).where(eq(operations.nodeId, nodeId));
    expect(ops.filter((o) => o.kind === 'decommission')).toEqual([]);
  });

  it('validates input, and needs an Idempotency-Key', async () => {
    await seedPool(h, { id: 'pool-v', tenantId: 'acme' });
    const { nodeId, hostname } = await retiredNode(h, 'pool-v');
    const p = (await preview(h, nodeId)).body;
    const good = {
      confirm: hostname,
      nodeGeneration: p.nodeGeneration,
      dependencyDigest: p.dependencyDigest,
      operator: 'alice',
      reason: 'EOL',
    };
    expect((await execute(h, nodeId, good, null)).status).toBe(400);
    expect((await execute(h, nodeId, good, 'short')).status).toBe(400);
    for (const body of [
      { ...good, reason: '' },
      { ...good, reason: 'r'.repeat(257) },
      { ...good, operator: '' },
      { ...good, dependencyDigest: 'md5:abc' },
      { ...good, nodeGeneration: 0 },
      { ...good, extra: true },
      { confirm: hostname },
    ]) {
      expect((await execute(h, nodeId, body, 'valid-key-0001')).status, JSON.stringify(body)).toBe(400);
    }
    expect((await call(h, 'POST', `/v1/nodes/${newId('node')}/decommission/preview`)).status).toBe(404);
    expect((await call(h, 'POST', '/v1/nodes/node_1/decommission/preview')).status).toBe(400);
  });
});
