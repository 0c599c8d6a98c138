import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { workflowOutbox } from '../db/schema';
import { drainWorkflowId } from '../workflows/definitions';
import { readNode, workflowResult } from './support/builders';
import { call, eventsOf, seedNode, seedPool } from './support/fixtures';
import { eventually, useHarness } from './support/harness';

const h = useHarness();

async function emptyNode(): Promise<string> {
  await seedPool(h, { id: 'pool-e', tenantId: 'acme' });
  return seedNode(h, { poolId: 'pool-e', tenantId: 'acme' });
}

const drain = (nodeId: string) => call(h, 'POST', `/v1/nodes/${nodeId}/drain`, { body: { reason: 'rma' } });

async function drainOperations(nodeId: string) {
  const reply = await call(h, 'GET', `/v1/operations?nodeId=${nodeId}&kind=drain`);
  return reply.body.items as { id: string; status: string }[];
}

async function drainedBy(nodeId: string, operationId: string) {
  const drained = await eventsOf(h, nodeId, 'node.drained');
  return drained.some((e) => e.operationId === operationId);
}

describe('a drain of a drained node', () => {
  it('twenty concurrent drains of an empty node make one operation and one draining/drained pair', async () => {
    const nodeId = await emptyNode();
    const replies = await Promise.all(Array.from({ length: 20 }, () => drain(nodeId)));
    expect(replies.map((r) => r.status).sort((a, b) => a - b)).toEqual([...Array<number>(19).fill(200), 202]);
    const opId = replies[0]!.body.operation.id as string;
    expect(replies.filter((r) => r.body.operation.id !== opId)).toEqual([]);

    await eventually(() => drainedBy(nodeId, opId), 5_000);
    expect(await drainOperations(nodeId)).toEqual([
      expect.objectContaining({ id: opId, status: 'succeeded' }),
    ]);
    const events = await eventsOf(h, nodeId);
    expect(events.map((e) => [e.type, e.operationId])).toEqual([
      ['node.draining', opId],
      ['node.drained', opId],
    ]);
  });

  it('answers 200 with the drain that drained it, and changes nothing', async () => {
    const nodeId = await emptyNode();
    const first = await drain(nodeId);
    expect(first.status).toBe(202);
    const opId = first.body.operation.id as string;
    expect(await workflowResult(h, drainWorkflowId(nodeId), opId)).toBe('drained');
    const { runId } = await h.temporal.workflow.getHandle(drainWorkflowId(nodeId)).describe();
    const before = await readNode(h, nodeId);

    const again = await drain(nodeId);
    expect(again.status).toBe(200);
    expect(again.body.operation).toMatchObject({
      id: opId,
      status: 'succeeded',
      progress: { phase: 'drained' },
    });
    expect(again.body.node).toEqual(before);
    // Answered from the record: no start for a worker (none queued, and none delivered: the
    // workflow's latest run is still the first drain's).
    expect(
      await h.db
        .select()
        .from(workflowOutbox)
        .where(eq(workflowOutbox.workflowId, drainWorkflowId(nodeId))),
    ).toEqual([]);
    expect((await h.temporal.workflow.getHandle(drainWorkflowId(nodeId)).describe()).runId).toBe(runId);
    expect(await readNode(h, nodeId)).toEqual(before);
    expect((await eventsOf(h, nodeId)).map((e) => e.type)).toEqual(['node.draining', 'node.drained']);
    expect((await drainOperations(nodeId)).map((o) => o.id)).toEqual([opId]);
  });

  it('after an uncordon a drain is a new one, also when the node was cordoned again by hand', async () => {
    const nodeId = await emptyNode();
    const first = await drain(nodeId);
    await eventually(() => drainedBy(nodeId, first.body.operation.id), 5_000);

    expect((await call(h, 'POST', `/v1/nodes/${nodeId}/uncordon`)).status).toBe(200);
    const second = await drain(nodeId);
    expect(second.status).toBe(202);
    expect(second.body.operation.id).not.toBe(first.body.operation.id);
    await eventually(() => drainedBy(nodeId, second.body.operation.id), 5_000);

    await call(h, 'POST', `/v1/nodes/${nodeId}/uncordon`);
    await call(h, 'POST', `/v1/nodes/${nodeId}/cordon`);
    const third = await drain(nodeId);
    expect(third.status).toBe(202);
    await eventually(() => drainedBy(nodeId, third.body.operation.id), 5_000);

    const ops = await drainOperations(nodeId);
    expect(ops.map((o) => [o.id, o.status])).toEqual([
      [third.body.operation.id, 'succeeded'],
      [second.body.operation.id, 'succeeded'],
      [first.body.operation.id, 'succeeded'],
    ]);
    expect((await eventsOf(h, nodeId)).map((e) => e.type)).toEqual([
      'node.draining',
      'node.drained',
      'node.uncordoned',
      'node.draining',
      'node.drained',
      'node.uncordoned',
      'node.cordoned',
      'node.draining',
      'node.drained',
    ]);
  });
});
