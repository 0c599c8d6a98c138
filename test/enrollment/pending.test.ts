import { WorkflowNotFoundError } from '@temporalio/client';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { newId } from '../../domain/ids';
import { nodes, operations } from '../../db/schema';
import { remediationWorkflowId } from '../../workflows/definitions';
import { join } from '../support/agents';
import { answerCommand, heartbeat, pollCommands } from '../support/builders';
import { call, eventsOf, seedPool } from '../support/fixtures';
import { useHarness } from '../support/harness';

const h = useHarness({ worker: false });

const ALLOWED = ['POST /v1/agent/heartbeat', 'GET /v1/agent/commands'];

async function pendingNode() {
  const reply = await join(h, {});
  expect(reply.body.provisionState).toBe('pending');
  return { nodeId: reply.body.nodeId as string, credential: reply.body.credential as string };
}

async function nodeRow(nodeId: string) {
  const [row] = await h.db.select().from(nodes).where(eq(nodes.id, nodeId));
  return row!;
}

async function expectNoRemediation(nodeId: string) {
  await expect(
    h.temporal.workflow.getHandle(remediationWorkflowId(nodeId)).describe(),
  ).rejects.toBeInstanceOf(WorkflowNotFoundError);
  expect(await h.db.select().from(operations).where(eq(operations.nodeId, nodeId))).toEqual([]);
}

describe('a pending node (joined without a token, not approved)', () => {
  it('may heartbeat and long-poll commands, and nothing else: conditions, ack and refuse are 403', async () => {
    const { nodeId, credential } = await pendingNode();

    const beat = await heartbeat(h, credential);
    expect(beat).toMatchObject({ status: 200, body: { nodeId, ok: true } });

    const started = Date.now();
    const poll = await pollCommands(h, credential, 1);
    expect(poll).toMatchObject({ status: 200, body: { items: [] } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000 - 50);

    const before = await nodeRow(nodeId);
    const eventsBefore = await eventsOf(h, nodeId);
    const refused = [
      await call(h, 'POST', '/v1/agent/conditions', {
        token: credential,
        body: { type: 'GpuXidError', status: true, reason: 'xid-79' },
      }),
      await answerCommand(h, credential, newId('cmd')),
      await answerCommand(h, credential, newId('cmd'), 'refuse', { reason: 'no' }),
    ];
    for (const reply of refused) {
      expect(reply.status).toBe(403);
      expect(reply.body.error).toMatchObject({
        code: 'FORBIDDEN',
        message: expect.stringContaining('until an operator approves it, it may only heartbeat and wait'),
        details: { provisionState: 'pending', allowed: ALLOWED },
      });
    }
    // The report changed nothing and started nothing.
    const after = await nodeRow(nodeId);
    expect(after.conditions).toEqual(before.conditions);
    expect(after.noScheduleReasons).toEqual(before.noScheduleReasons);
    expect(after.version).toBe(before.version);
    expect(await eventsOf(h, nodeId)).toEqual(eventsBefore);
    await expectNoRemediation(nodeId);
  });

  it('once approved, its condition reports are accepted', async () => {
    await seedPool(h, { id: 'pool-pending', tenantId: 'acme' });
    const { nodeId, credential } = await pendingNode();
    const approved = await call(h, 'POST', `/v1/nodes/${nodeId}/approve`, {
      body: { poolId: 'pool-pending' },
    });
    expect(approved.status).toBe(200);
    const report = await call(h, 'POST', '/v1/agent/conditions', {
      token: credential,
      body: { type: 'DiskPressure', status: false, reason: 'ok' },
    });
    expect(report.status).toBe(200);
    expect(report.body.conditions).toEqual([
      { type: 'DiskPressure', status: false, reason: 'ok', since: expect.any(String) },
    ]);
  });

  it('once rejected, every agent call is refused, heartbeats and long-polls included', async () => {
    const { nodeId, credential } = await pendingNode();
    expect(
      (await call(h, 'POST', `/v1/nodes/${nodeId}/reject`, { body: { reason: 'unknown machine' } })).status,
    ).toBe(200);
    const replies = [
      await heartbeat(h, credential),
      await pollCommands(h, credential),
      await call(h, 'POST', '/v1/agent/conditions', {
        token: credential,
        body: { type: 'GpuXidError', status: true },
      }),
    ];
    for (const reply of replies) {
      expect(reply.status).toBe(403);
      expect(reply.body.error).toMatchObject({
        code: 'FORBIDDEN',
        details: { provisionState: 'rejected', allowed: [] },
      });
    }
    await expectNoRemediation(nodeId);
  });
});
