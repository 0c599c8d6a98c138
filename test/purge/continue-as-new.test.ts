import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { startOperation } from '../../api/workflows';
import { nodes, operations } from '../../db/schema';
import {
  beginPurgeUpdate,
  purgeAnsweredSignal,
  purgeProgressQuery,
  purgeWorkflow,
  purgeWorkflowId,
} from '../../workflows/definitions';
import { OperationIdKey } from '../../workflows/search-attributes';
import { answerCommand, heartbeat, joinedPoolNode, pollCommands, purge, readNode } from '../support/builders';
import { call, eventsOf } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { recordHistory } from '../support/histories';

const h = useHarness();

/** Looks per run in these tests (production: PURGE_CHECKS_PER_RUN), through the workflow's input. */
const CHECKS_PER_RUN = 2;
/** A run's history is this short or shorter: begin or resume, a few looks, continue-as-new. */
const SMALL_HISTORY = 60;

const operator = { kind: 'operator', keyId: 'bootstrap', name: 'test' } as const;

/**
 * An offline node whose purge, started with a small `continueAsNewAfter`, has continued as new at
 * least twice: the test wakes it (the answer signal, as a lost-and-sent-again one would) until
 * Temporal shows a third run.
 */
async function purgeContinuedTwice(poolId: string) {
  const { nodeId, credential } = await joinedPoolNode(h, poolId);
  await heartbeat(h, credential, 'offline');
  const [node] = await h.db.select().from(nodes).where(eq(nodes.id, nodeId));
  const began = await startOperation(h.deps, purgeWorkflow, {
    node: node!,
    principal: operator,
    request: { reason: 'sold', force: false },
    input: { continueAsNewAfter: CHECKS_PER_RUN },
  });
  expect(began.created).toBe(true);
  const handle = h.temporal.workflow.getHandle(purgeWorkflowId(nodeId));
  const first = await eventually(async () => {
    const progress = await handle.query(purgeProgressQuery);
    return progress.commandId ? progress : undefined;
  });
  const runs = [(await handle.describe()).runId];
  await eventually(
    async () => {
      await handle.signal(purgeAnsweredSignal);
      const { runId } = await handle.describe();
      if (!runs.includes(runId)) runs.push(runId);
      return runs.length >= 3;
    },
    30_000,
    100,
  );
  for (const runId of runs.slice(0, -1)) {
    const run = await h.temporal.workflow.getHandle(purgeWorkflowId(nodeId), runId).describe();
    expect(run.status.name).toBe('CONTINUED_AS_NEW');
    expect(run.historyLength).toBeLessThanOrEqual(SMALL_HISTORY);
  }
  return { nodeId, credential, handle, operationId: began.operation.id, first, runs };
}

describe('a purge that waits long for an offline node', () => {
  it('continues as new, answers as before in the new run, and purges the node once when it comes back', async () => {
    const { nodeId, credential, handle, operationId, first, runs } = await purgeContinuedTwice('pool-can');

    // The continued run answers as the first did: progress, current details, search attributes.
    const progress = await eventually(async () => {
      const now = await handle.query(purgeProgressQuery);
      return now.phase === 'waiting-for-node' && now.commandId ? now : undefined;
    });
    expect(progress).toEqual({ ...first, phase: 'waiting-for-node' });
    expect((await call(h, 'GET', `/v1/operations/${operationId}`)).body.progress).toEqual(progress);
    const details = (await handle.query<{ currentDetails: string }>('__temporal_workflow_metadata'))
      .currentDetails;
    expect(details).toBe(
      `waiting for node ${nodeId} to acknowledge purge command ${first.commandId} ` +
        `(since ${first.waitingSince!.slice(0, 19)}Z; it is delivered when the node polls)`,
    );
    const description = await handle.describe();
    expect(description.typedSearchAttributes.get(OperationIdKey)).toBe(operationId);

    // A second start joins the purge; a begin re-sent into the new run finds the operation it made.
    const again = await purge(h, nodeId, { reason: 'sold' });
    expect(again.status).toBe(200);
    expect(again.body.operation).toMatchObject({ id: operationId, status: 'running' });
    const resent = await handle.executeUpdate(beginPurgeUpdate, {
      args: [
        {
          actor: 'key:test',
          reason: 'sold',
          force: false,
          idempotencyScope: null,
          idempotencyKey: null,
          requestHash: null,
          operationId,
        },
      ],
    });
    expect(resent).toMatchObject({ created: true, operation: { id: operationId, status: 'running' } });
    expect((await handle.describe()).runId).toBe(runs.at(-1));

    // The node comes back, gets its command and acks: forgotten once.
    await heartbeat(h, credential);
    const delivered = (await pollCommands(h, credential)).body.items;
    expect(delivered).toMatchObject([{ id: first.commandId, kind: 'purge' }]);
    expect((await answerCommand(h, credential, first.commandId!)).status).toBe(200);
    expect(await handle.result()).toBe('purged');
    const last = await handle.describe();
    expect(last.historyLength).toBeLessThanOrEqual(SMALL_HISTORY);
    await recordHistory(h.temporal, purgeWorkflowId(nodeId), 'purge-continued-as-new', runs[0]);
    await recordHistory(h.temporal, purgeWorkflowId(nodeId), 'purge-continued');

    expect((await readNode(h, nodeId)).deletedAt).toEqual(expect.any(String));
    expect(await eventsOf(h, nodeId, 'node.purge.requested')).toHaveLength(1);
    expect(await eventsOf(h, nodeId, 'node.purged')).toMatchObject([{ operationId }]);
    expect(await h.db.select().from(operations).where(eq(operations.nodeId, nodeId))).toMatchObject([
      { id: operationId, kind: 'purge', status: 'succeeded' },
    ]);
  });

  it('a DELETE of the node in a continued run ends the purge cancelled', async () => {
    const { nodeId, handle, operationId } = await purgeContinuedTwice('pool-can-del');
    expect((await call(h, 'DELETE', `/v1/nodes/${nodeId}`, { body: { reason: 'gone' } })).status).toBe(200);
    expect(await handle.result()).toBe('cancelled');
    expect(await h.db.select().from(operations).where(eq(operations.nodeId, nodeId))).toMatchObject([
      { id: operationId, status: 'cancelled', result: { forgottenBy: 'delete' } },
    ]);
    expect(await eventsOf(h, nodeId, 'node.purged')).toEqual([]);
  });

  it('DELETE /v1/operations/{id} in a continued run withdraws the command; the node stays purging', async () => {
    const { nodeId, credential, handle, operationId, first } = await purgeContinuedTwice('pool-can-cancel');
    const cancelled = await call(h, 'DELETE', `/v1/operations/${operationId}`, {
      body: { reason: 'wrong node' },
    });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({
      status: 'cancelled',
      cancellation: { by: 'key:bootstrap-operator' },
    });
    expect(await handle.result()).toBe('cancelled');
    expect(await h.db.select().from(operations).where(eq(operations.nodeId, nodeId))).toMatchObject([
      { id: operationId, status: 'cancelled' },
    ]);
    expect(await eventsOf(h, nodeId, 'node.purge.cancelled')).toMatchObject([
      { operationId, data: { commandId: first.commandId, withdrawn: true } },
    ]);
    expect(await readNode(h, nodeId)).toMatchObject({ provisionState: 'purging', deletedAt: null });
    await heartbeat(h, credential);
    expect((await pollCommands(h, credential)).body.items).toEqual([]);
  });
});
