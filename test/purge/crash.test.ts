import { describe, expect, it } from 'vitest';
import { purgeWorkflowId } from '../../workflows/definitions';
import { joinedNode } from '../support/agents';
import { call, eventsOf, seedPool } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { killWorker, startWorkerProcess } from '../support/worker-process';

const h = useHarness({ worker: false });

describe('purge survives killed workers', () => {
  it('an ack while no worker runs, and a worker killed right after it, still forget the node once', async () => {
    await seedPool(h, { id: 'pool-k', tenantId: 'acme' });
    const { nodeId, credential } = await joinedNode(h, 'pool-k');
    let worker = startWorkerProcess(h);
    const started = await call(h, 'POST', `/v1/nodes/${nodeId}/purge`, { body: { confirm: true } });
    expect(started.status).toBe(202);
    await eventually(async () => {
      const op = await call(h, 'GET', `/v1/operations/${started.body.operation.id}`);
      return op.body.progress?.phase === 'waiting-for-node';
    });
    await killWorker(worker);

    const [command] = (await call(h, 'GET', '/v1/agent/commands?wait=0', { token: credential })).body.items;
    expect(
      (await call(h, 'POST', `/v1/agent/commands/${command.id}/ack`, { token: credential, body: {} })).status,
    ).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    expect(await eventsOf(h, nodeId, 'node.purged')).toEqual([]);

    worker = startWorkerProcess(h);
    try {
      // Killed again as soon as the node is forgotten: the workflow's last steps rerun on the next worker.
      await eventually(async () => (await eventsOf(h, nodeId, 'node.purged')).length > 0, 40_000, 20);
      await killWorker(worker);
      worker = startWorkerProcess(h);
      expect(await h.temporal.workflow.getHandle(purgeWorkflowId(nodeId)).result()).toBe('purged');
    } finally {
      await killWorker(worker);
    }
    expect(await eventsOf(h, nodeId, 'node.purged')).toHaveLength(1);
    expect((await call(h, 'GET', `/v1/operations/${started.body.operation.id}`)).body.status).toBe(
      'succeeded',
    );
  }, 120_000);
});
