import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { nodeCommands, nodes } from '../../db/schema';
import { remediationProgressQuery, remediationWorkflowId } from '../../workflows/definitions';
import { createToken, join } from '../support/agents';
import { eventsOf, seedPool } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { agentOf } from '../support/remediation';

const h = useHarness({ remediation: { attemptTimeoutMs: 60_000 } });

async function fleet(poolId: string, size: number) {
  await seedPool(h, { id: poolId, tenantId: 'acme', kind: 'provider' });
  const token = await createToken(h, { poolId });
  const joined = [];
  for (let i = 0; i < size; i++)
    joined.push((await join(h, { token: token.secret })).body as { nodeId: string; credential: string });
  return joined;
}

const workflow = (nodeId: string) => h.temporal.workflow.getHandle(remediationWorkflowId(nodeId));

/** Resolves once the node's remediation has sent its first command and waits for it to clear. */
async function attempting(nodeId: string): Promise<void> {
  await eventually(async () => {
    const progress = await workflow(nodeId).query(remediationProgressQuery);
    return progress.phase === 'attempting' && progress.attempt === 1;
  });
}

async function remediateCommandsIn(poolNodeIds: string[]) {
  const rows = await h.db.select().from(nodeCommands).where(eq(nodeCommands.kind, 'remediate'));
  return rows.filter((r) => poolNodeIds.includes(r.nodeId));
}

describe('storm protection', () => {
  it('just under the threshold remediates; just over escalates at once without a command', async () => {
    const pool = await fleet('pool-storm-a', 10);
    const ids = pool.map((n) => n.nodeId);
    // 40% of 10 live nodes: four unhealthy nodes are allowed, the fifth is a storm.
    for (const n of pool.slice(0, 4)) {
      const reply = await agentOf(h, n.credential).report('GpuXidError', true);
      expect(reply.body.remediation.status).toBe('running');
    }
    await eventually(async () => (await remediateCommandsIn(ids)).length === 4);
    const fifth = pool[4]!;
    const stormed = await agentOf(h, fifth.credential).report('GpuXidError', true);
    expect(stormed.body.remediation).toMatchObject({
      status: 'failed',
      error: { reason: 'remediation-storm' },
    });
    expect(await eventsOf(h, fifth.nodeId, 'node.remediation.')).toMatchObject([
      { type: 'node.remediation.escalated', reason: 'remediation-storm' },
    ]);
    const [row] = await h.db.select().from(nodes).where(eq(nodes.id, fifth.nodeId));
    expect(row?.maintenance).toBe(true);
    // Its workflow ended without a command; each of the four sent its one and waits on it.
    expect(await workflow(fifth.nodeId).result()).toBe('escalated');
    for (const n of pool.slice(0, 4)) await attempting(n.nodeId);
    expect(await remediateCommandsIn(ids)).toHaveLength(4);
  });

  it('a fleet-wide fault reported by every node at once sends no more commands than the threshold allows', async () => {
    const pool = await fleet('pool-storm-b', 10);
    const ids = pool.map((n) => n.nodeId);
    const replies = await Promise.all(
      pool.map((n) => agentOf(h, n.credential).report('GpuXidError', true, 'bad driver push')),
    );
    const statuses = replies.map((r) => r.body.remediation?.status);
    const running = statuses.filter((s) => s === 'running').length;
    // Every report lands before the storm check of the others: most, or all, escalate at once.
    expect(running).toBeLessThanOrEqual(4);
    expect(statuses.filter((s) => s === 'failed')).toHaveLength(10 - running);
    // Every workflow has done what it will: escalated without a command, or sent one and waits on it.
    for (const [i, n] of pool.entries()) {
      if (statuses[i] === 'failed') expect(await workflow(n.nodeId).result()).toBe('escalated');
      else await attempting(n.nodeId);
    }
    expect((await remediateCommandsIn(ids)).length).toBe(running);
    const maintenance = await h.db.select().from(nodes).where(eq(nodes.maintenance, true));
    expect(maintenance.filter((n) => ids.includes(n.id))).toHaveLength(10 - running);
    for (const n of pool) {
      const escalated = await eventsOf(h, n.nodeId, 'node.remediation.escalated');
      expect(escalated.every((e) => e.reason === 'remediation-storm')).toBe(true);
    }
  });
});
