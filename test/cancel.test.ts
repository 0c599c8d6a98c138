import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createActivities } from '../activities';
import { disruptions, nodeCommands, operations } from '../db/schema';
import { drainWorkflowId, purgeWorkflowId, remediationWorkflowId } from '../workflows/definitions';
import { operationWhen, purge, readNode, seedPoolNode, setNode } from './support/builders';
import { allocate, call, eventsOf, tenantKey } from './support/fixtures';
import { eventually, useHarness } from './support/harness';
import { recordHistory } from './support/histories';

const h = useHarness();

/** A node that drains and cannot finish: it holds one allocation with no end. */
async function drainingNode(poolId = 'pool-c') {
  const nodeId = await seedPoolNode(h, poolId);
  await allocate(h, nodeId, 'acme');
  const started = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`, { body: { reason: 'replace PSU' } });
  expect(started.status).toBe(202);
  // The workflow is waiting on its allocation (not still starting) when the test cancels it.
  await eventually(async () => {
    const op = await call(h, 'GET', `/v1/operations/${started.body.operation.id}`);
    return op.body.progress?.phase === 'waiting';
  });
  return { nodeId, opId: started.body.operation.id as string };
}

const types = async (nodeId: string) => (await eventsOf(h, nodeId)).map((e) => e.type);

describe('DELETE /v1/operations/{id}', () => {
  it('cancels a drain: who asked, draining off, still cordoned, one node.drain.cancelled; again changes nothing', async () => {
    const { nodeId, opId } = await drainingNode();
    await h.db.insert(disruptions).values({ nodeId, poolId: 'pool-c', operationId: opId, state: 'waiting' });

    // Two at once: the first recorded wins, both answer the same cancelled operation.
    const [cancelled, racing] = await Promise.all(
      [1, 2].map(() => call(h, 'DELETE', `/v1/operations/${opId}`, { body: { reason: 'wrong node' } })),
    );
    expect(cancelled!.status).toBe(200);
    expect(racing).toEqual(cancelled);
    expect(cancelled!.body).toMatchObject({
      id: opId,
      status: 'cancelled',
      cancellation: { by: 'key:bootstrap-operator', reason: 'wrong node' },
    });
    expect(await readNode(h, nodeId)).toMatchObject({ cordoned: true, noScheduleReasons: [] });
    expect(await types(nodeId)).toEqual(['node.draining', 'node.drain.cancelled']);
    const [event] = await eventsOf(h, nodeId, 'node.drain.cancelled');
    expect(event).toMatchObject({ actor: 'key:bootstrap-operator', operationId: opId });
    expect(await h.db.select().from(disruptions).where(eq(disruptions.nodeId, nodeId))).toEqual([]);
    expect(await h.temporal.workflow.getHandle(drainWorkflowId(nodeId)).result()).toBe('cancelled');
    await recordHistory(h.temporal, drainWorkflowId(nodeId), 'drain-deleted');

    const again = await call(h, 'DELETE', `/v1/operations/${opId}`, { body: { reason: 'twice' } });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(cancelled!.body);
    expect(await types(nodeId)).toEqual(['node.draining', 'node.drain.cancelled']);
  });

  it('a cancel from any Temporal client (the Web UI) ends the drain the same way, naming its identity', async () => {
    const { nodeId, opId } = await drainingNode();
    await h.temporal.workflow.getHandle(drainWorkflowId(nodeId)).cancel();
    expect(await h.temporal.workflow.getHandle(drainWorkflowId(nodeId)).result()).toBe('cancelled');
    const op = await call(h, 'GET', `/v1/operations/${opId}`);
    // No request was recorded: the record names the identity on the workflow's cancel request.
    expect(op.body).toMatchObject({
      status: 'cancelled',
      cancellation: { by: expect.stringMatching(/^temporal:.+@/), reason: null },
    });
    expect(await readNode(h, nodeId)).toMatchObject({ cordoned: true, noScheduleReasons: [] });
    const cancelledEvents = await eventsOf(h, nodeId, 'node.drain.cancelled');
    expect(cancelledEvents).toHaveLength(1);
    expect(cancelledEvents[0]!.actor).toBe(op.body.cancellation.by);
  });

  it('uncordon is the same cancel, naming the uncordoning key', async () => {
    const { nodeId, opId } = await drainingNode();
    const uncordoned = await call(h, 'POST', `/v1/nodes/${nodeId}/uncordon`, { body: { reason: 'back' } });
    expect(uncordoned.body).toMatchObject({ cordoned: false, noScheduleReasons: [] });
    // Cancelled in the uncordon's own transaction: no wait for the workflow.
    const op = await call(h, 'GET', `/v1/operations/${opId}`);
    expect(op.body).toMatchObject({
      status: 'cancelled',
      cancellation: { by: 'key:bootstrap-operator', reason: 'back' },
    });
    expect(await eventsOf(h, nodeId, 'node.drain.cancelled')).toMatchObject([
      { actor: 'key:bootstrap-operator', operationId: opId },
    ]);
    expect(await h.temporal.workflow.getHandle(drainWorkflowId(nodeId)).result()).toBe('cancelled');
    expect(await types(nodeId)).toEqual(['node.draining', 'node.uncordoned', 'node.drain.cancelled']);
  });

  it('a drain terminated in Temporal is closed failed by the reconciler, and the next drain starts afresh', async () => {
    const { nodeId, opId } = await drainingNode();
    await h.temporal.workflow.getHandle(drainWorkflowId(nodeId)).terminate('by hand');
    // Until reconciled, a drain joins the stale running operation: the reason the reconciler exists.
    const activities = createActivities({ db: h.db, temporal: h.temporal });
    const pass = await activities.reconcileClosedOperations({ olderThanMs: 0 });
    expect(pass.closed).toEqual([{ operationId: opId, workflowStatus: 'TERMINATED' }]);
    const op = await call(h, 'GET', `/v1/operations/${opId}`);
    expect(op.body).toMatchObject({
      status: 'failed',
      error: { code: 'WORKFLOW_CLOSED', workflowStatus: 'TERMINATED' },
    });
    expect(await readNode(h, nodeId)).toMatchObject({ cordoned: true, noScheduleReasons: [] });
    expect(await types(nodeId)).toEqual(['node.draining', 'node.operation.abandoned']);

    // A second pass finds nothing more to do.
    expect((await activities.reconcileClosedOperations({ olderThanMs: 0 })).closed).toEqual([]);
    const next = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`);
    expect(next.status).toBe(202);
    expect(next.body.operation.id).not.toBe(opId);
    expect(next.body.node.noScheduleReasons).toEqual(['draining']);
  });

  it('cancels a purge: its command withdrawn, the node stays purging, one node.purge.cancelled', async () => {
    const nodeId = await seedPoolNode(h, 'pool-c');
    const started = await purge(h, nodeId, { reason: 'EOL' });
    expect(started.status).toBe(202);
    const opId = started.body.operation.id as string;
    // Its workflow waits for the node's answer (one cancelled before it started never starts).
    await operationWhen(h, opId, (op) => op.progress.phase === 'waiting-for-node');
    const cancelled = await call(h, 'DELETE', `/v1/operations/${opId}`, { body: { reason: 'not this one' } });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({
      status: 'cancelled',
      cancellation: { by: 'key:bootstrap-operator' },
    });
    const [command] = await h.db.select().from(nodeCommands).where(eq(nodeCommands.operationId, opId));
    expect(command!.status).toBe('cancelled');
    expect(await readNode(h, nodeId)).toMatchObject({ provisionState: 'purging', deletedAt: null });
    expect(await types(nodeId)).toEqual(['node.purge.requested', 'node.purge.cancelled']);
    expect(await h.temporal.workflow.getHandle(purgeWorkflowId(nodeId)).result()).toBe('cancelled');
    await recordHistory(h.temporal, purgeWorkflowId(nodeId), 'purge-deleted');
  });

  it('a purge the node already acknowledged is past cancelling: forgotten, succeeded, the DELETE 409', async () => {
    const nodeId = await seedPoolNode(h, 'pool-c');
    const started = await purge(h, nodeId);
    const opId = started.body.operation.id as string;
    // The ack is recorded but its signal has not reached the workflow yet.
    await h.db.update(nodeCommands).set({ status: 'acked' }).where(eq(nodeCommands.operationId, opId));
    const refused = await call(h, 'DELETE', `/v1/operations/${opId}`);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'INVALID_STATE', details: { status: 'succeeded' } });
    expect((await readNode(h, nodeId)).deletedAt).not.toBeNull();
    expect(await types(nodeId)).toEqual(['node.purge.requested', 'node.purged']);
  });

  it('cancels a remediation: escalated to maintenance, operation cancelled by who asked', async () => {
    const nodeId = await seedPoolNode(h, 'pool-c');
    const since = new Date().toISOString();
    await setNode(h, nodeId, {
      conditions: [{ type: 'GpuXidError', status: true, reason: 'xid-79', since }],
      noScheduleReasons: ['condition:GpuXidError'],
    });
    const started = await call(h, 'POST', `/v1/nodes/${nodeId}/remediations`, {
      body: { condition: 'GpuXidError' },
    });
    expect(started.status).toBe(202);
    const opId = started.body.operation.id as string;
    await eventually(async () => (await eventsOf(h, nodeId, 'node.remediation.attempted')).length === 1);
    const cancelled = await call(h, 'DELETE', `/v1/operations/${opId}`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({
      status: 'cancelled',
      cancellation: { by: 'key:bootstrap-operator' },
    });
    expect(await readNode(h, nodeId)).toMatchObject({ maintenance: true });
    const escalated = await eventsOf(h, nodeId, 'node.remediation.escalated');
    expect(escalated).toHaveLength(1);
    expect(escalated[0]).toMatchObject({ actor: 'key:bootstrap-operator', operationId: opId });
    expect(await h.temporal.workflow.getHandle(remediationWorkflowId(nodeId)).result()).toBe('cancelled');
    const open = await h.db.select().from(nodeCommands).where(eq(nodeCommands.operationId, opId));
    expect(open.map((c) => c.status)).toEqual(['cancelled']);
  });

  it('a workflow already gone (terminated): the cancel cleans up at once, the answer still cancelled', async () => {
    const { nodeId, opId } = await drainingNode();
    await h.temporal.workflow.getHandle(drainWorkflowId(nodeId)).terminate('by hand');
    const cancelled = await call(h, 'DELETE', `/v1/operations/${opId}`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({
      status: 'cancelled',
      cancellation: { by: 'key:bootstrap-operator' },
    });
    expect(await readNode(h, nodeId)).toMatchObject({ cordoned: true, noScheduleReasons: [] });
    expect(await types(nodeId)).toEqual(['node.draining', 'node.drain.cancelled']);
  });

  it('refuses a finished operation (409 with its status), a tenant key (403), a bad id (400), children off a pool drain (400)', async () => {
    const nodeId = await seedPoolNode(h, 'pool-c');
    const drained = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`);
    const opId = drained.body.operation.id as string;
    await eventually(
      async () => (await call(h, 'GET', `/v1/operations/${opId}`)).body.status === 'succeeded',
    );
    const finished = await call(h, 'DELETE', `/v1/operations/${opId}`);
    expect(finished.status).toBe(409);
    expect(finished.body.error).toMatchObject({ code: 'INVALID_STATE', details: { status: 'succeeded' } });

    const { nodeId: other, opId: running } = await drainingNode();
    const tenant = await tenantKey(h, 'acme', ['compute:nodes:read', 'compute:nodes:drain']);
    const forbidden = await call(h, 'DELETE', `/v1/operations/${running}`, { token: tenant.secret });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error.code).toBe('FORBIDDEN');
    const badId = await call(h, 'DELETE', '/v1/operations/not-an-op');
    expect(badId.status).toBe(400);
    expect(badId.body.error.code).toBe('INVALID_INPUT');
    const children = await call(h, 'DELETE', `/v1/operations/${running}`, { body: { children: 'cancel' } });
    expect(children.status).toBe(400);
    expect(children.body.error.code).toBe('INVALID_INPUT');
    // None of them changed anything.
    const [op] = await h.db.select().from(operations).where(eq(operations.id, running));
    expect(op).toMatchObject({ status: 'running', cancellation: null });
    expect(await types(other)).toEqual(['node.draining']);
  });
});

describe('DELETE while no worker is up', () => {
  it('cancels at once, in its own transaction; the workflow ends once a worker takes it', async () => {
    const { nodeId, opId } = await drainingNode();
    await h.stopWorker();
    try {
      const reply = await call(h, 'DELETE', `/v1/operations/${opId}`, { body: { reason: 'no worker' } });
      expect(reply.status).toBe(200);
      expect(reply.body).toMatchObject({
        status: 'cancelled',
        progress: { phase: 'cancelled' },
        cancellation: { by: 'key:bootstrap-operator', reason: 'no worker' },
      });
      expect(await readNode(h, nodeId)).toMatchObject({ cordoned: true, noScheduleReasons: [] });
      expect(await types(nodeId)).toEqual(['node.draining', 'node.drain.cancelled']);
    } finally {
      await h.startWorker();
    }
    // The wake-up waited in the outbox: the workflow finds its record finished and ends.
    expect(await h.temporal.workflow.getHandle(drainWorkflowId(nodeId)).result()).toBe('cancelled');
    expect(await types(nodeId)).toEqual(['node.draining', 'node.drain.cancelled']);
  });
});

describe('supersede', () => {
  it('a purge on a draining node ends its drain in its begin: cancelled by the purger, superseded', async () => {
    const { nodeId, opId } = await drainingNode();
    // The drain waits on an allocation: a purge must be told to release it.
    expect((await purge(h, nodeId, { reason: 'EOL' })).status).toBe(409);
    expect((await call(h, 'GET', `/v1/operations/${opId}`)).body.status).toBe('running');
    const started = await purge(h, nodeId, { reason: 'EOL', force: true });
    expect(started.status).toBe(202);
    const purgeId = started.body.operation.id as string;
    expect(started.body.node).toMatchObject({ provisionState: 'purging', noScheduleReasons: [] });
    const drain = await call(h, 'GET', `/v1/operations/${opId}`);
    expect(drain.body).toMatchObject({
      status: 'cancelled',
      cancellation: { by: 'key:bootstrap-operator', reason: `superseded by purge ${purgeId}` },
    });
    expect(await types(nodeId)).toEqual([
      'node.draining',
      'allocation.force-released',
      'node.drain.cancelled',
      'node.purge.requested',
    ]);
    // The drain was told and ends at once, without its clean-up running again.
    expect(await h.temporal.workflow.getHandle(drainWorkflowId(nodeId)).result()).toBe('cancelled');
    expect(await eventsOf(h, nodeId, 'node.drain.cancelled')).toHaveLength(1);
  });
});
