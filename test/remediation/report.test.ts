import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { workflowOutbox } from '../../db/schema';
import { progressInWords } from '../../domain/progress';
import { remediationWorkflowId } from '../../workflows/definitions';
import { joinedNode } from '../support/agents';
import { readNode } from '../support/builders';
import { eventsOf, seedPool } from '../support/fixtures';
import { useHarness } from '../support/harness';
import {
  agentOf,
  remediateCommands,
  remediationsOf,
  remediationWhen,
  operationRunResult,
} from '../support/remediation';

const h = useHarness();

describe('a condition report', () => {
  it('while no worker is up records the condition and its remediation pending in one answer (200); the remediation runs once a worker is back, once', async () => {
    await seedPool(h, { id: 'pool-ra1', tenantId: 'acme', kind: 'provider', policy: { maxUnhealthy: 5 } });
    const { nodeId, credential } = await joinedNode(h, 'pool-ra1');
    const agent = agentOf(h, credential);

    await h.stopWorker();
    let opId: string;
    try {
      const reported = await agent.report('GpuXidError', true, 'xid-79');
      expect(reported.status).toBe(200);
      // The report stands, and so does its remediation: recorded, waiting for a worker.
      expect(reported.body.remediation).toMatchObject({
        kind: 'remediation',
        status: 'pending',
        workflowId: remediationWorkflowId(nodeId),
        progress: { phase: 'waiting-for-worker', startedAt: null },
      });
      opId = reported.body.remediation.id;
      expect(await readNode(h, nodeId)).toMatchObject({
        noScheduleReasons: ['condition:GpuXidError'],
        conditions: [{ type: 'GpuXidError', status: true, reason: 'xid-79' }],
      });
      const [recorded] = await remediationsOf(h, nodeId);
      expect(recorded).toMatchObject({ id: opId, status: 'pending' });
      expect(progressInWords(recorded.progress)).toBe(
        'Waiting for a worker: the request is recorded and starts as soon as a worker takes it.',
      );
      // Its workflow's start waits in the outbox, written with the report.
      const starts = await h.db.select().from(workflowOutbox).where(eq(workflowOutbox.operationId, opId));
      expect(starts).toMatchObject([{ action: 'start', workflowId: remediationWorkflowId(nodeId) }]);

      // Said again meanwhile (the agent reconnected): already handled, nothing new; nothing doubles.
      const again = await agent.report('GpuXidError', true, 'xid-79');
      expect(again.status).toBe(200);
      expect(again.body.remediation).toBeNull();
      expect((await remediationsOf(h, nodeId)).map((o) => o.id)).toEqual([opId]);
      // Nothing is sent to the node before a worker begins the remediation.
      expect(await remediateCommands(h, nodeId)).toEqual([]);
      expect(await eventsOf(h, nodeId, 'node.remediation.')).toEqual([]);
    } finally {
      await h.startWorker();
    }

    // A worker is back: its dispatcher starts the remediation, which sends the first rung.
    const running = await remediationWhen(h, opId);
    expect(running).toMatchObject({ status: 'running', progress: { startedAt: expect.any(String) } });
    const command = await agent.nextCommand();
    expect(command).toMatchObject({ kind: 'remediate', action: 'reset-accelerator' });

    // Said once more: the running remediation handles it; nothing new begins.
    const once = await agent.report('GpuXidError', true, 'xid-79');
    expect(once.status).toBe(200);
    expect(once.body.remediation).toBeNull();
    expect((await remediationsOf(h, nodeId)).map((o) => o.id)).toEqual([opId]);
    expect(await remediateCommands(h, nodeId)).toHaveLength(1);

    await agent.report('GpuXidError', false);
    expect(await operationRunResult(h, opId)).toBe('succeeded');
    expect((await eventsOf(h, nodeId, 'node.remediation.')).map((e) => e.type)).toEqual([
      'node.remediation.attempted',
      'node.remediation.succeeded',
    ]);
  });

  it('again after its remediation escalated, with the condition still true, starts nothing', async () => {
    await seedPool(h, { id: 'pool-ra2', tenantId: 'acme', kind: 'provider', policy: { maxUnhealthy: 5 } });
    const { nodeId, credential } = await joinedNode(h, 'pool-ra2');
    const agent = agentOf(h, credential);
    const reported = await agent.report('GpuXidError', true, 'xid-79');
    const operation = reported.body.remediation as { id: string };
    const refuse = async (action: string) => {
      const command = await agent.nextCommand(action);
      await agent.refuse(command.id, `${action} failed`);
    };
    await refuse('reset-accelerator');
    await refuse('reboot');
    expect(await operationRunResult(h, operation.id)).toBe('escalated');
    const before = await eventsOf(h, nodeId);

    const again = await agent.report('GpuXidError', true, 'xid-79');
    expect(again.status).toBe(200);
    expect(again.body.remediation).toBeNull();
    expect((await remediationsOf(h, nodeId)).map((o) => [o.id, o.status])).toEqual([
      [operation.id, 'failed'],
    ]);
    expect(await eventsOf(h, nodeId)).toEqual(before);
    expect(await readNode(h, nodeId)).toMatchObject({ maintenance: true });
  });
});
