import { WorkflowNotFoundError } from '@temporalio/client';
import { and, eq, inArray } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { nodeCommands, nodes, workflowOutbox, type PoolPolicy } from '../../db/schema';
import { remediationWorkflowId } from '../../workflows/definitions';
import { createToken, join } from '../support/agents';
import { eventsOf, seedPool } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { agentOf, remediationWhen } from '../support/remediation';

// Attempts wait the default 10 minutes: an allowed remediation keeps running while the test looks.
const h = useHarness();

async function fleet(poolId: string, size: number, policy: PoolPolicy = {}) {
  await seedPool(h, { id: poolId, tenantId: 'acme', kind: 'provider', policy });
  const token = await createToken(h, { poolId });
  const joined = [];
  for (let i = 0; i < size; i++)
    joined.push((await join(h, { token: token.secret })).body as { nodeId: string; credential: string });
  return joined;
}

/** Resolves once the remediation has sent its first command and waits for it to clear. */
async function attempting(opId: string): Promise<void> {
  await remediationWhen(h, opId);
}

/**
 * The storm's escalation ended the operation in the request's transaction: it was answered ended,
 * no workflow start waits in the outbox for it, and no workflow ran for it.
 */
async function endedWithoutWorkflow(nodeId: string, reply: { body: { remediation: { id: string } } }) {
  expect(reply.body.remediation).toMatchObject({
    status: 'failed',
    error: { reason: 'remediation-storm' },
    progress: { phase: 'escalated' },
  });
  const opId = reply.body.remediation.id;
  expect(await h.db.select().from(workflowOutbox).where(eq(workflowOutbox.operationId, opId))).toEqual([]);
  await expect(h.temporal.workflow.getHandle(remediationWorkflowId(nodeId)).describe()).rejects.toThrow(
    WorkflowNotFoundError,
  );
}

async function remediateCommandsIn(nodeIds: string[]) {
  return h.db
    .select()
    .from(nodeCommands)
    .where(and(eq(nodeCommands.kind, 'remediate'), inArray(nodeCommands.nodeId, nodeIds)));
}

// Pool size, maxUnhealthy, and how many nodes in a row remediate before the next one is a storm.
const MATRIX: { size: number; maxUnhealthy?: number | string; allowed: number }[] = [
  // 40% of one node is 0.4: the node alone is over it, and still remediates (one at a time).
  { size: 1, allowed: 1 },
  // 40% of 2 is 0.8: the first remediates alone; the second, with the first running, is a storm.
  { size: 2, allowed: 1 },
  // 40% of 5 is 2: two unhealthy are within it (just under), the third is over (just over).
  { size: 5, allowed: 2 },
  { size: 10, allowed: 4 },
  { size: 2, maxUnhealthy: 0, allowed: 1 },
  { size: 5, maxUnhealthy: 1, allowed: 1 },
  { size: 10, maxUnhealthy: 3, allowed: 3 },
  { size: 10, maxUnhealthy: '50%', allowed: 5 },
];

describe('storm protection', () => {
  it.each(MATRIX)(
    'pool of $size, maxUnhealthy $maxUnhealthy: $allowed remediate, the next escalates at once without a command',
    async ({ size, maxUnhealthy, allowed }) => {
      const poolId = `pool-storm-${size}-${String(maxUnhealthy ?? 'default').replace('%', 'p')}`;
      const pool = await fleet(poolId, size, maxUnhealthy === undefined ? {} : { maxUnhealthy });
      const ids = pool.map((n) => n.nodeId);
      const allowedOps: string[] = [];
      for (const [i, n] of pool.slice(0, allowed).entries()) {
        const reply = await agentOf(h, n.credential).report('GpuXidError', true);
        expect(reply.body.remediation.status).toBe('pending');
        allowedOps.push(reply.body.remediation.id);
        // Its command goes out before the next node reports.
        await attempting(reply.body.remediation.id);
        expect(await remediateCommandsIn(ids)).toHaveLength(i + 1);
      }
      if (allowed === size) return;
      const over = pool[allowed]!;
      const stormed = await agentOf(h, over.credential).report('GpuXidError', true);
      await endedWithoutWorkflow(over.nodeId, stormed);
      const events = await eventsOf(h, over.nodeId, 'node.remediation.');
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        type: 'node.remediation.escalated',
        reason: 'remediation-storm',
        data: {
          attempts: [],
          storm: {
            liveNodes: size,
            unhealthyNodes: allowed + 1,
            remediating: allowed,
            maxUnhealthy: maxUnhealthy ?? '40%',
          },
        },
      });
      const [row] = await h.db.select().from(nodes).where(eq(nodes.id, over.nodeId));
      expect(row).toMatchObject({ maintenance: true });
      // No command for the stormed node; the allowed ones each still have their one.
      const commands = await remediateCommandsIn(ids);
      expect(commands.filter((c) => c.nodeId === over.nodeId)).toEqual([]);
      expect(commands).toHaveLength(allowed);
      for (const opId of allowedOps) await attempting(opId);
    },
  );

  it('escalated nodes left unhealthy do not hold back the one remediation a pool always gets', async () => {
    const pool = await fleet('pool-storm-escalated', 5);
    const ids = pool.map((n) => n.nodeId);
    // Three nodes faulted and were escalated by hand earlier: unhealthy, in maintenance, none remediating.
    const since = new Date().toISOString();
    await h.db
      .update(nodes)
      .set({
        maintenance: true,
        noScheduleReasons: ['condition:GpuXidError'],
        conditions: [{ type: 'GpuXidError', status: true, reason: 'xid-79', since }],
      })
      .where(inArray(nodes.id, ids.slice(0, 3)));
    const reply = await agentOf(h, pool[3]!.credential).report('GpuXidError', true);
    expect(reply.body.remediation.status).toBe('pending');
    await attempting(reply.body.remediation.id);
    // With that one running, the fifth is a storm (5 of 5 unhealthy, allowance 2).
    const stormed = await agentOf(h, pool[4]!.credential).report('GpuXidError', true);
    await endedWithoutWorkflow(pool[4]!.nodeId, stormed);
    expect((await remediateCommandsIn(ids)).map((c) => c.nodeId)).toEqual([pool[3]!.nodeId]);
  });

  it('a fleet-wide fault reported by every node at once sends no more commands than the threshold allows', async () => {
    const pool = await fleet('pool-storm-b', 10);
    const ids = pool.map((n) => n.nodeId);
    const replies = await Promise.all(
      pool.map((n) => agentOf(h, n.credential).report('GpuXidError', true, 'bad driver push')),
    );
    const statuses = replies.map((r) => r.body.remediation?.status);
    const letThrough = statuses.filter((s) => s === 'pending').length;
    // The first request to take the pool's lock is always let through; the storm check counts the
    // remediations the earlier requests recorded, so all but at most the threshold escalate at once.
    expect(letThrough).toBeGreaterThanOrEqual(1);
    expect(letThrough).toBeLessThanOrEqual(4);
    expect(statuses.filter((s) => s === 'failed')).toHaveLength(10 - letThrough);
    // Each has done what it will: escalated without a workflow, or sent its command and waits on it.
    for (const [i, n] of pool.entries()) {
      if (statuses[i] === 'failed') await endedWithoutWorkflow(n.nodeId, replies[i]!);
      else await attempting(replies[i]!.body.remediation.id);
    }
    expect((await remediateCommandsIn(ids)).length).toBe(letThrough);
    const maintenance = await h.db.select().from(nodes).where(eq(nodes.maintenance, true));
    expect(maintenance.filter((n) => ids.includes(n.id))).toHaveLength(10 - letThrough);
    for (const n of pool) {
      const escalated = await eventsOf(h, n.nodeId, 'node.remediation.escalated');
      expect(escalated.every((e) => e.reason === 'remediation-storm')).toBe(true);
    }
  });
});
