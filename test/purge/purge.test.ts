import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { verifyPurgeCommand } from '../../domain/signing';
import { nodeCommands, operations } from '../../db/schema';
import { purgeProgressQuery, purgeWorkflowId } from '../../workflows/definitions';
import { joinedNode } from '../support/agents';
import {
  answerCommand,
  heartbeat,
  joinedPoolNode,
  placeAllocation,
  pollCommands,
  purge,
  readNode,
} from '../support/builders';
import { call, eventsOf, seedPool, tenantKey } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { recordHistory } from '../support/histories';
import { longPollWaiting } from '../support/witnesses';

const h = useHarness();

describe('purge', () => {
  it('queues a command signed by the cluster CA; the ack forgets the node', async () => {
    const { nodeId, credential } = await joinedPoolNode(h, 'pool-p');
    const started = await purge(h, nodeId, { reason: 'laptop returned' });
    expect(started.status).toBe(202);
    expect(started.body.node).toMatchObject({ provisionState: 'purging' });
    expect(started.body.operation).toMatchObject({
      kind: 'purge',
      status: 'running',
      workflowId: purgeWorkflowId(nodeId),
    });
    const again = await purge(h, nodeId);
    expect(again.status).toBe(200);
    expect(again.body.operation.id).toBe(started.body.operation.id);
    // Out of placement at once, like a blocked node.
    const placed = await placeAllocation(h, nodeId);
    expect(placed.body.error.details.reasons).toContain('provisionState:purging');

    const delivered = await pollCommands(h, credential);
    expect(delivered.body.items).toHaveLength(1);
    const command = delivered.body.items[0];
    expect(command).toMatchObject({
      kind: 'purge',
      payload: expect.any(String),
      signature: expect.any(String),
    });
    expect(
      verifyPurgeCommand(command, { caPublicKeyPem: h.ca.publicKeyPem, clusterId: h.clusterId, nodeId }),
    ).toMatchObject({
      ok: true,
      claims: { clusterId: h.clusterId, nodeId, commandId: command.id, kind: 'purge' },
    });
    const progress = await eventually(async () => {
      const op = await call(h, 'GET', `/v1/operations/${started.body.operation.id}`);
      return op.body.progress?.phase === 'waiting-for-node' ? op.body.progress : undefined;
    });
    expect(progress.waitingFor.commandId).toBe(command.id);

    expect((await answerCommand(h, credential, command.id)).status).toBe(200);
    expect(await h.temporal.workflow.getHandle(purgeWorkflowId(nodeId)).result()).toBe('purged');
    await recordHistory(h.temporal, purgeWorkflowId(nodeId), 'purge');
    const node = await readNode(h, nodeId);
    expect(node.deletedAt).toEqual(expect.any(String));
    expect((await heartbeat(h, credential)).status).toBe(401);
    expect((await eventsOf(h, nodeId)).map((e) => e.type).slice(-2)).toEqual([
      'node.purge.requested',
      'node.purged',
    ]);
    expect(await eventsOf(h, nodeId, 'node.purged')).toHaveLength(1);
    const [op] = await h.db.select().from(operations).where(eq(operations.id, started.body.operation.id));
    expect(op?.status).toBe('succeeded');
  });

  it('a refusal is audited with its reason and the node stays purging; DELETE then ends it cancelled', async () => {
    const { nodeId, credential } = await joinedPoolNode(h, 'pool-p');
    const started = await purge(h, nodeId);
    const [command] = (await pollCommands(h, credential)).body.items;
    const refused = await answerCommand(h, credential, command.id, 'refuse', {
      reason: 'bad signature: not signed by this cluster CA',
    });
    expect(refused.status).toBe(200);
    expect(await eventsOf(h, nodeId, 'node.purge.refused')).toMatchObject([
      { reason: 'bad signature: not signed by this cluster CA', operationId: started.body.operation.id },
    ]);
    const handle = h.temporal.workflow.getHandle(purgeWorkflowId(nodeId));
    await eventually(async () => (await handle.query(purgeProgressQuery)).phase === 'refused');
    expect(await readNode(h, nodeId)).toMatchObject({
      provisionState: 'purging',
      deletedAt: null,
    });
    // Refusing again is the same answer; an ack after a refusal is not.
    expect((await answerCommand(h, credential, command.id, 'refuse', { reason: 'x' })).status).toBe(200);
    expect((await answerCommand(h, credential, command.id)).status).toBe(409);
    expect(await eventsOf(h, nodeId, 'node.purge.refused')).toHaveLength(1);

    const deleted = await call(h, 'DELETE', `/v1/nodes/${nodeId}`, { body: { reason: 'never coming back' } });
    expect(deleted.body).toEqual({ nodeId, deleted: true });
    expect(await handle.result()).toBe('cancelled');
    const [op] = await h.db.select().from(operations).where(eq(operations.id, started.body.operation.id));
    expect(op?.status).toBe('cancelled');
    expect(await eventsOf(h, nodeId, 'node.purged')).toEqual([]);
  });

  it('is delivered to a blocked node, and to an offline node when it comes back', async () => {
    const blocked = await joinedPoolNode(h, 'pool-p');
    await call(h, 'POST', `/v1/nodes/${blocked.nodeId}/block`, { body: { reason: 'stolen' } });
    expect((await pollCommands(h, blocked.credential)).status).toBe(403);
    await purge(h, blocked.nodeId);
    const forBlocked = await pollCommands(h, blocked.credential, 5);
    expect(forBlocked.status).toBe(200);
    expect(forBlocked.body.items).toMatchObject([{ kind: 'purge' }]);
    expect((await heartbeat(h, blocked.credential)).status).toBe(403);
    await answerCommand(h, blocked.credential, forBlocked.body.items[0].id);
    await h.temporal.workflow.getHandle(purgeWorkflowId(blocked.nodeId)).result();

    const offline = await joinedNode(h, 'pool-p');
    await heartbeat(h, offline.credential, 'offline');
    const purging = await purge(h, offline.nodeId);
    // The purge waits for the node while it is away; then it comes back.
    await eventually(async () => {
      const op = await call(h, 'GET', `/v1/operations/${purging.body.operation.id}`);
      return op.body.progress?.phase === 'waiting-for-node';
    });
    await heartbeat(h, offline.credential);
    expect((await pollCommands(h, offline.credential)).body.items).toMatchObject([{ kind: 'purge' }]);
  });

  it('needs an operator and confirm: true; refuses deleted and decommissioned nodes', async () => {
    const { nodeId, credential } = await joinedPoolNode(h, 'pool-q');
    for (const body of [{}, { confirm: false }, { confirm: 'true' }, { confirm: true, extra: 1 }]) {
      expect(
        (await call(h, 'POST', `/v1/nodes/${nodeId}/purge`, { body })).status,
        JSON.stringify(body),
      ).toBe(400);
    }
    const tenant = await tenantKey(h, 'acme', ['compute:nodes:read', 'compute:nodes:delete'], 'acme-purger');
    expect((await purge(h, nodeId, { token: tenant.secret })).status).toBe(403);
    expect((await purge(h, nodeId, { token: credential })).status).toBe(403);
    expect((await purge(h, nodeId, { token: null })).status).toBe(401);
    expect((await readNode(h, nodeId)).provisionState).toBe('adopted');
    expect(await h.db.select().from(nodeCommands).where(eq(nodeCommands.nodeId, nodeId))).toEqual([]);

    await call(h, 'POST', `/v1/nodes/${nodeId}/cordon`);
    await call(h, 'DELETE', `/v1/nodes/${nodeId}`);
    const gone = await purge(h, nodeId);
    expect(gone.status).toBe(409);
    expect(gone.body.error.code).toBe('INVALID_STATE');
  });

  it('an agent that acks while the begin is still settling does not turn the purge into a refusal', async () => {
    await seedPool(h, { id: 'pool-fast', tenantId: 'acme' });
    for (let round = 0; round < 8; round++) {
      const { nodeId, credential } = await joinedNode(h, 'pool-fast');
      // The agent's long-poll is already waiting: it gets the command and acks at once.
      const acked = pollCommands(h, credential, 20).then(async (reply) => {
        const [command] = reply.body.items;
        return answerCommand(h, credential, command.id);
      });
      await longPollWaiting(h.deps.wakeups, nodeId);
      const started = await purge(h, nodeId);
      expect(started.status, `round ${round}: ${JSON.stringify(started.body)}`).toBe(202);
      expect((await acked).status).toBe(200);
      expect(await h.temporal.workflow.getHandle(purgeWorkflowId(nodeId)).result()).toBe('purged');
      expect(await eventsOf(h, nodeId, 'node.purged')).toHaveLength(1);
    }
  });
});
