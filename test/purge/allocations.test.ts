import { eq } from 'drizzle-orm';
import { WorkflowNotFoundError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { newId } from '../../domain/ids';
import { allocations, events, nodeCommands, operations, workflowOutbox } from '../../db/schema';
import { purgeWorkflowId } from '../../workflows/definitions';
import {
  answerCommand,
  joinedPoolNode,
  placeAllocation,
  pollCommands,
  purge,
  readNode,
  workflowResult,
} from '../support/builders';
import { allocate, call, eventsOf } from '../support/fixtures';
import { useHarness } from '../support/harness';

const h = useHarness();

const allocationRows = (nodeId: string) =>
  h.db.select().from(allocations).where(eq(allocations.nodeId, nodeId)).orderBy(allocations.id);
const operationsOf = (nodeId: string) => h.db.select().from(operations).where(eq(operations.nodeId, nodeId));
const commandsOf = (nodeId: string) =>
  h.db.select().from(nodeCommands).where(eq(nodeCommands.nodeId, nodeId));
const outboxOf = (nodeId: string) =>
  h.db
    .select()
    .from(workflowOutbox)
    .where(eq(workflowOutbox.workflowId, purgeWorkflowId(nodeId)));
const liveOn = async (nodeId: string) =>
  (await call(h, 'GET', `/v1/allocations?nodeId=${nodeId}&live=true`)).body.items as { id: string }[];

/** A joined node holding one allocation of acme and one of globex; their ids and tenants, by id. */
async function heldNode(poolId: string) {
  const node = await joinedPoolNode(h, poolId);
  const held = [
    { id: await allocate(h, node.nodeId, 'acme'), tenantId: 'acme' },
    { id: await allocate(h, node.nodeId, 'globex'), tenantId: 'globex' },
  ].sort((a, b) => (a.id < b.id ? -1 : 1));
  return { ...node, held };
}

describe('purge of a node that holds allocations', () => {
  it('is refused INVALID_STATE naming them (ids, tenants), and nothing changes', async () => {
    const { nodeId, held } = await heldNode('pool-pa');
    const before = await readNode(h, nodeId);
    const eventsBefore = await eventsOf(h, nodeId);
    for (const body of [{ reason: 'sold' }, { reason: 'sold', force: false }]) {
      const refused = await purge(h, nodeId, body);
      expect(refused.status, JSON.stringify(body)).toBe(409);
      expect(refused.body.error).toMatchObject({
        code: 'INVALID_STATE',
        details: { openAllocations: 2, allocations: held },
      });
      expect(refused.body.error.message).toBe(
        `node ${nodeId} holds 2 open allocations (${held[0]!.id} of ${held[0]!.tenantId}, ` +
          `${held[1]!.id} of ${held[1]!.tenantId}); release them first, or purge with "force": true ` +
          'to release them with the purge',
      );
    }
    // Refused in the request's transaction: no operation, so no workflow to start.
    expect(await outboxOf(nodeId)).toEqual([]);
    await expect(h.temporal.workflow.getHandle(purgeWorkflowId(nodeId)).describe()).rejects.toThrow(
      WorkflowNotFoundError,
    );
    expect(await readNode(h, nodeId)).toEqual(before);
    expect(await eventsOf(h, nodeId)).toEqual(eventsBefore);
    expect(await operationsOf(nodeId)).toEqual([]);
    expect(await commandsOf(nodeId)).toEqual([]);
    expect((await liveOn(nodeId)).map((a) => a.id)).toEqual(held.map((a) => a.id));

    // Once they are released, the same purge goes through.
    for (const { id } of held)
      expect((await call(h, 'POST', `/v1/allocations/${id}/release`)).status).toBe(200);
    const started = await purge(h, nodeId, { reason: 'sold' });
    expect(started.status).toBe(202);
    expect(await eventsOf(h, nodeId, 'allocation.force-released')).toEqual([]);
  });

  it('with force: true releases them in the transaction the purge is requested in, then purges as usual', async () => {
    const { nodeId, credential, held } = await heldNode('pool-pf');
    const key = 'purge-force-0001';
    // Refused without force: the key is not used up by a refusal.
    expect((await purge(h, nodeId, { idempotencyKey: key })).status).toBe(409);
    const started = await purge(h, nodeId, { force: true, reason: 'rma', idempotencyKey: key });
    expect(started.status).toBe(202);
    const opId = started.body.operation.id;
    expect(started.body.node).toMatchObject({ provisionState: 'purging' });

    // One event per allocation, on the node under the allocation's tenant; a purge has no deadline.
    const forced = await h.db.select().from(events).where(eq(events.type, 'allocation.force-released'));
    expect(forced.filter((e) => e.nodeId === nodeId)).toMatchObject(
      held.map((a) => ({
        tenantId: a.tenantId,
        actor: 'system:purge',
        operationId: opId,
        data: { allocationId: a.id, tenantId: a.tenantId, operationId: opId },
      })),
    );
    expect(forced.filter((e) => e.nodeId === nodeId).map((e) => Object.keys(e.data).sort())).toEqual([
      ['allocationId', 'operationId', 'tenantId'],
      ['allocationId', 'operationId', 'tenantId'],
    ]);
    const rows = await allocationRows(nodeId);
    expect(rows.map((a) => ({ id: a.id, releasedBy: a.releasedBy }))).toEqual(
      held.map((a) => ({ id: a.id, releasedBy: 'system:purge' })),
    );
    // One transaction: its rows all carry the transaction's time (now()).
    const [operation] = await h.db.select().from(operations).where(eq(operations.id, opId));
    const began = operation!.createdAt.getTime();
    expect(rows.map((a) => a.releasedAt?.getTime())).toEqual([began, began]);
    expect(
      (await h.db.select().from(events).where(eq(events.operationId, opId))).map((e) => [
        e.type,
        e.createdAt.getTime(),
      ]),
    ).toEqual([
      ['allocation.force-released', began],
      ['allocation.force-released', began],
      ['node.purge.requested', began],
    ]);
    expect(await liveOn(nodeId)).toEqual([]);

    // The same key without force is another request.
    const reused = await purge(h, nodeId, { reason: 'rma', idempotencyKey: key });
    expect(reused.status).toBe(422);
    expect(reused.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    const again = await purge(h, nodeId, { force: true, reason: 'rma', idempotencyKey: key });
    expect(again.status).toBe(200);
    expect(again.body.operation.id).toBe(opId);

    const [command] = (await pollCommands(h, credential)).body.items;
    expect((await answerCommand(h, credential, command.id)).status).toBe(200);
    expect(await workflowResult(h, purgeWorkflowId(nodeId), opId)).toBe('purged');
    expect((await readNode(h, nodeId)).deletedAt).toEqual(expect.any(String));
    expect(await eventsOf(h, nodeId, 'node.purged')).toHaveLength(1);
    expect(await eventsOf(h, nodeId, 'allocation.force-released')).toHaveLength(2);
    expect(await operationsOf(nodeId)).toMatchObject([{ id: opId, status: 'succeeded' }]);
  });

  it('nothing is left pointing at the forgotten node: placement refuses it, the forget releases leftovers', async () => {
    const { nodeId, credential } = await joinedPoolNode(h, 'pool-pl');
    const started = await purge(h, nodeId);
    expect(started.status).toBe(202);
    const placed = await placeAllocation(h, nodeId, 'acme');
    expect(placed.status).toBe(409);
    expect(placed.body.error).toMatchObject({
      code: 'NOT_SCHEDULABLE',
      details: { reasons: ['provisionState:purging'] },
    });
    // An allocation the node held when its purge began before purges refused held nodes.
    const leftover = newId('alloc');
    await h.db.insert(allocations).values({ id: leftover, nodeId, tenantId: 'acme', kind: 'job' });

    const [command] = (await pollCommands(h, credential)).body.items;
    await answerCommand(h, credential, command.id);
    expect(await workflowResult(h, purgeWorkflowId(nodeId), started.body.operation.id)).toBe('purged');
    expect(await liveOn(nodeId)).toEqual([]);
    expect((await allocationRows(nodeId)).map((a) => ({ id: a.id, releasedBy: a.releasedBy }))).toEqual([
      { id: leftover, releasedBy: 'system:purge' },
    ]);
    expect((await eventsOf(h, nodeId)).map((e) => e.type).slice(-3)).toEqual([
      'node.purge.requested',
      'allocation.force-released',
      'node.purged',
    ]);
    expect(await eventsOf(h, nodeId, 'allocation.force-released')).toMatchObject([
      { actor: 'system:purge', operationId: started.body.operation.id, data: { allocationId: leftover } },
    ]);
  });

  it('a placement racing the purge request: the purge or the placement is refused, never neither', async () => {
    for (let round = 0; round < 12; round++) {
      const { nodeId } = await joinedPoolNode(h, 'pool-pr');
      // The placement sent a little later each round, so it lands before, inside and after the request's transaction.
      const later = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
      const [purged, placed] = await Promise.all([
        purge(h, nodeId),
        later(round * 10).then(() => placeAllocation(h, nodeId, 'acme')),
      ]);
      const context = `round ${round}: ${JSON.stringify([purged.body, placed.body])}`;
      if (purged.status === 202) {
        expect(placed.status, context).toBe(409);
        expect(placed.body.error.details.reasons, context).toContain('provisionState:purging');
        expect(await liveOn(nodeId)).toEqual([]);
      } else {
        expect([purged.status, placed.status], context).toEqual([409, 201]);
        expect(purged.body.error.details, context).toEqual({
          openAllocations: 1,
          allocations: [{ id: placed.body.id, tenantId: 'acme' }],
        });
        expect(await operationsOf(nodeId)).toEqual([]);
      }
    }
  });

  it('refuses a force that is not a boolean (400) before anything changes', async () => {
    const { nodeId } = await joinedPoolNode(h, 'pool-pb');
    for (const force of ['yes', 'true', 1, null]) {
      const bad = await call(h, 'POST', `/v1/nodes/${nodeId}/purge`, { body: { confirm: true, force } });
      expect(bad.status, JSON.stringify(force)).toBe(400);
      expect(bad.body.error.code).toBe('INVALID_INPUT');
    }
    expect((await readNode(h, nodeId)).provisionState).toBe('adopted');
    expect(await operationsOf(nodeId)).toEqual([]);
    expect(await commandsOf(nodeId)).toEqual([]);
    expect(await eventsOf(h, nodeId, 'node.purge.requested')).toEqual([]);
  });
});
