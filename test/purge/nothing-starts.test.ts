import { describe, expect, it } from 'vitest';
import { joinedPoolNode, operationWhen, pollCommands, purge, readNode } from '../support/builders';
import { call, eventsOf } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { agentOf } from '../support/remediation';

const h = useHarness();

describe('a node being purged', () => {
  it('starts nothing else: drain and remediation are 409 naming the purge; the agent gets the purge alone', async () => {
    const { nodeId, credential } = await joinedPoolNode(h, 'pool-ending');
    const purging = await purge(h, nodeId, { reason: 'returned to the vendor' });
    expect(purging.status).toBe(202);
    const purgeId = purging.body.operation.id as string;
    // Waiting for the node's answer: the purge command is queued, unanswered.
    await operationWhen(h, purgeId, (op) => op.progress?.phase === 'waiting-for-node');
    const before = await readNode(h, nodeId);
    const eventsBefore = await eventsOf(h, nodeId);

    const refusal = {
      code: 'INVALID_STATE',
      message: expect.stringContaining(`is being purged (operation ${purgeId}`),
      details: { operationId: purgeId, kind: 'purge', status: 'running' },
    };
    const drained = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`, { body: { deadline: '0s' } });
    expect(drained.status).toBe(409);
    expect(drained.body.error).toMatchObject(refusal);
    const remediated = await call(h, 'POST', `/v1/nodes/${nodeId}/remediations`, {
      body: { condition: 'GpuXidError', reason: 'xid 79 seen in dmesg' },
    });
    expect(remediated.status).toBe(409);
    expect(remediated.body.error).toMatchObject(refusal);

    // The agent's own report is recorded, and starts no remediation.
    const reported = await agentOf(h, credential).report('GpuXidError', true, 'xid-79');
    expect(reported.status).toBe(200);
    expect(reported.body.remediation).toBeNull();

    // A pool drain does not drain it either: the node is listed failed, with the same refusal.
    const pooled = await call(h, 'POST', '/v1/pools/pool-ending/drain', {
      body: { reason: 'rack work', maxConcurrent: 5 },
    });
    expect(pooled.status).toBe(202);
    const poolDrain = await operationWhen(h, pooled.body.operation.id, (op) => op.status === 'failed');
    expect(poolDrain.result.failed).toEqual([
      expect.objectContaining({ nodeId, code: 'INVALID_STATE', message: refusal.message }),
    ]);

    // Nothing of it reached the node: the purge is its one command, and its record is as it was
    // but for the condition the agent reported (a report writes no event).
    const commands = (await pollCommands(h, credential)).body.items as { kind: string }[];
    expect(commands.map((c) => c.kind)).toEqual(['purge']);
    const after = await readNode(h, nodeId);
    expect(after).toMatchObject({
      provisionState: 'purging',
      cordoned: before.cordoned,
      maintenance: before.maintenance,
    });
    const newEvents = (await eventsOf(h, nodeId)).slice(eventsBefore.length).map((e) => e.type);
    expect(newEvents).toEqual([]);
    expect(after.conditions).toEqual([expect.objectContaining({ type: 'GpuXidError', status: true })]);
    const ops = (await call(h, 'GET', `/v1/operations?nodeId=${nodeId}`)).body.items as { kind: string }[];
    expect(ops.map((op) => op.kind)).toEqual(['purge']);
  });
});
