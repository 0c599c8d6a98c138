import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { operations } from '../../db/schema';
import { progressInWords } from '../../domain/progress';
import { purgeProgressQuery, purgeWorkflowId, wakeSignal } from '../../workflows/definitions';
import { OperationIdKey } from '../../workflows/search-attributes';
import {
  answerCommand,
  heartbeat,
  joinedPoolNode,
  operationWhen,
  pollCommands,
  purge,
  readNode,
} from '../support/builders';
import { call, eventsOf } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { recordHistory } from '../support/histories';

const h = useHarness();

/** Looks per run in these tests (production: PURGE_CHECKS_PER_RUN), through the workflow's input. */
const CHECKS_PER_RUN = 2;
/** A run's history is this short or shorter: a few looks, continue-as-new. */
const SMALL_HISTORY = 60;

/**
 * An offline node whose purge, restarted with a small `continueAsNewAfter`, has continued as new
 * at least twice: the test wakes it (as a node's answer would) until Temporal shows a third run.
 */
async function purgeContinuedTwice(poolId: string) {
  const { nodeId, credential } = await joinedPoolNode(h, poolId);
  await heartbeat(h, credential, 'offline');
  const requested = await purge(h, nodeId, { reason: 'sold' });
  expect(requested.status).toBe(202);
  const operationId: string = requested.body.operation.id;
  const first = (await operationWhen(h, operationId, (op) => op.progress.phase === 'waiting-for-node'))
    .progress;
  expect(first.waitingFor.commandId).toEqual(expect.any(String));
  // The same workflow, restarted under a small continue-as-new budget: its record carries the rest.
  const handle = h.temporal.workflow.getHandle(purgeWorkflowId(nodeId));
  const dispatched = await handle.describe();
  await handle.terminate('restart with a small continue-as-new budget');
  await h.temporal.workflow.start('purge', {
    workflowId: purgeWorkflowId(nodeId),
    taskQueue: h.taskQueue,
    args: [{ operationId, nodeId, continueAsNewAfter: CHECKS_PER_RUN }],
    typedSearchAttributes: dispatched.typedSearchAttributes,
  });
  const runs = [(await handle.describe()).runId];
  await eventually(
    async () => {
      await handle.signal(wakeSignal, 'test');
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
  return { nodeId, credential, handle, operationId, first, runs };
}

describe('a purge that waits long for an offline node', () => {
  it('continues as new, answers as before in the new run, and purges the node once when it comes back', async () => {
    const { nodeId, credential, handle, operationId, first, runs } = await purgeContinuedTwice('pool-can');

    // The continued run answers as the record says, as the first did: progress, current details,
    // search attributes.
    const progress = await eventually(async () => {
      const [queried, recorded] = await Promise.all([
        handle.query(purgeProgressQuery).catch(() => undefined),
        call(h, 'GET', `/v1/operations/${operationId}`),
      ]);
      return queried?.phase === 'waiting-for-node' &&
        JSON.stringify(queried) === JSON.stringify(recorded.body.progress)
        ? queried
        : undefined;
    });
    expect(progress).toMatchObject({
      phase: 'waiting-for-node',
      startedAt: first.startedAt,
      waitingFor: first.waitingFor,
    });
    const details = (await handle.query<{ currentDetails: string }>('__temporal_workflow_metadata'))
      .currentDetails;
    expect(details).toBe(progressInWords(progress));
    expect(details).toContain(`(command ${first.waitingFor.commandId})`);
    const description = await handle.describe();
    expect(description.typedSearchAttributes.get(OperationIdKey)).toBe(operationId);

    // A second request joins the purge: the same operation, no new run.
    const again = await purge(h, nodeId, { reason: 'sold' });
    expect(again.status).toBe(200);
    expect(again.body.operation).toMatchObject({ id: operationId, status: 'running' });
    expect((await handle.describe()).runId).toBe(runs.at(-1));

    // The node comes back, gets its command and acks: forgotten once.
    await heartbeat(h, credential);
    const delivered = (await pollCommands(h, credential)).body.items;
    const commandId: string = first.waitingFor.commandId;
    expect(delivered).toMatchObject([{ id: commandId, kind: 'purge' }]);
    expect((await answerCommand(h, credential, commandId)).status).toBe(200);
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
      { operationId, data: { commandId: first.waitingFor.commandId, withdrawn: true } },
    ]);
    expect(await readNode(h, nodeId)).toMatchObject({ provisionState: 'purging', deletedAt: null });
    await heartbeat(h, credential);
    expect((await pollCommands(h, credential)).body.items).toEqual([]);
  });
});
