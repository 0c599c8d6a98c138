import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { verifyPurgeCommand } from '../../domain/signing';
import { nodeCommands, operations } from '../../db/schema';
import { purgeWorkflowId } from '../../workflows/definitions';
import { joinedNode } from '../support/agents';
import {
  answerCommand,
  heartbeat,
  joinedPoolNode,
  operationWhen,
  placeAllocation,
  pollCommands,
  purge,
  readNode,
  workflowResult,
} from '../support/builders';
import { call, eventsOf, seedPool, tenantKey } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { recordHistory } from '../support/histories';

const h = useHarness();

describe('purge', () => {
  it('queues a command signed by the cluster CA; the ack forgets the node', async () => {
    const { nodeId, credential } = await joinedPoolNode(h, 'pool-p');
    const started = await purge(h, nodeId, { reason: 'laptop returned' });
    expect(started.status).toBe(202);
    expect(started.body.node).toMatchObject({ provisionState: 'purging' });
    // Recorded, not yet begun: no worker has looked at it.
    expect(started.body.operation).toMatchObject({
      kind: 'purge',
      status: 'pending',
      workflowId: purgeWorkflowId(nodeId),
      progress: { phase: 'waiting-for-worker' },
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
    const { progress } = await operationWhen(
      h,
      started.body.operation.id,
      (op) => op.status === 'running' && op.progress?.phase === 'waiting-for-node',
    );
    expect(progress.waitingFor).toEqual({ commandId: command.id, refusedReason: null });

    expect((await answerCommand(h, credential, command.id)).status).toBe(200);
    expect(await workflowResult(h, purgeWorkflowId(nodeId), started.body.operation.id)).toBe('purged');
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
    const { progress } = await operationWhen(
      h,
      started.body.operation.id,
      (op) => op.progress?.phase === 'refused',
    );
    expect(progress.waitingFor).toEqual({
      commandId: command.id,
      refusedReason: 'bad signature: not signed by this cluster CA',
    });
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
    expect(await workflowResult(h, purgeWorkflowId(nodeId), started.body.operation.id)).toBe('cancelled');
    const [op] = await h.db.select().from(operations).where(eq(operations.id, started.body.operation.id));
    expect(op?.status).toBe('cancelled');
    expect(await eventsOf(h, nodeId, 'node.purged')).toEqual([]);
  });

  it('is delivered to a blocked node, and to an offline node when it comes back', async () => {
    const blocked = await joinedPoolNode(h, 'pool-p');
    await call(h, 'POST', `/v1/nodes/${blocked.nodeId}/block`, { body: { reason: 'stolen' } });
    expect((await pollCommands(h, blocked.credential)).status).toBe(403);
    const blockedPurge = await purge(h, blocked.nodeId);
    const forBlocked = await pollCommands(h, blocked.credential, 5);
    expect(forBlocked.status).toBe(200);
    expect(forBlocked.body.items).toMatchObject([{ kind: 'purge' }]);
    expect((await heartbeat(h, blocked.credential)).status).toBe(403);
    await answerCommand(h, blocked.credential, forBlocked.body.items[0].id);
    expect(await workflowResult(h, purgeWorkflowId(blocked.nodeId), blockedPurge.body.operation.id)).toBe(
      'purged',
    );

    const offline = await joinedNode(h, 'pool-p');
    await heartbeat(h, offline.credential, 'offline');
    const purging = await purge(h, offline.nodeId);
    // The purge waits for the node while it is away; then it comes back.
    await operationWhen(h, purging.body.operation.id, (op) => op.progress?.phase === 'waiting-for-node');
    expect((await readNode(h, offline.nodeId)).deletedAt).toBeNull();
    await heartbeat(h, offline.credential);
    const forOffline = (await pollCommands(h, offline.credential)).body.items;
    expect(forOffline).toMatchObject([{ kind: 'purge' }]);
    await answerCommand(h, offline.credential, forOffline[0].id);
    expect(await workflowResult(h, purgeWorkflowId(offline.nodeId), purging.body.operation.id)).toBe(
      'purged',
    );
    expect((await readNode(h, offline.nodeId)).deletedAt).toEqual(expect.any(String));
  });

  it('refuses a node whose identity was revoked, saying to delete or decommission it instead', async () => {
    const { nodeId, credential } = await joinedPoolNode(h, 'pool-p');
    const revoked = await call(h, 'POST', `/v1/nodes/${nodeId}/revoke-identity`, {
      body: { reason: 'leaked' },
    });
    expect(revoked.status).toBe(200);
    const before = await readNode(h, nodeId);
    const refused = await purge(h, nodeId);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({
      code: 'INVALID_STATE',
      details: { identityGeneration: 2, instead: ['delete', 'decommission'] },
    });
    expect(refused.body.error.message).toContain(`DELETE /v1/nodes/${nodeId}`);
    // Nothing changed: the node is as it was, no operation, no command, no event.
    expect(await readNode(h, nodeId)).toEqual(before);
    expect(await h.db.select().from(operations).where(eq(operations.nodeId, nodeId))).toEqual([]);
    expect(await h.db.select().from(nodeCommands).where(eq(nodeCommands.nodeId, nodeId))).toEqual([]);
    expect(await eventsOf(h, nodeId, 'node.purge')).toEqual([]);
    expect((await pollCommands(h, credential)).status).toBe(401);
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

  it('an agent that acks before the workflow even started still ends the purge purged, once', async () => {
    await seedPool(h, { id: 'pool-fast', tenantId: 'acme' });
    const { nodeId, credential } = await joinedNode(h, 'pool-fast');
    // No worker, no dispatcher: the request is answered, its workflow cannot start.
    await h.stopWorker();
    try {
      const started = await purge(h, nodeId);
      expect(started.status).toBe(202);
      const [command] = (await pollCommands(h, credential)).body.items;
      expect(command).toMatchObject({ kind: 'purge' });
      expect((await answerCommand(h, credential, command.id)).status).toBe(200);
      // The same ack again is the same answer; it is still only acknowledged, nothing is forgotten.
      expect((await answerCommand(h, credential, command.id)).status).toBe(200);
      expect((await call(h, 'GET', `/v1/operations/${started.body.operation.id}`)).body).toMatchObject({
        status: 'pending',
        progress: { phase: 'waiting-for-worker' },
      });
      expect(await readNode(h, nodeId)).toMatchObject({ provisionState: 'purging', deletedAt: null });
      expect(await eventsOf(h, nodeId, 'node.purged')).toEqual([]);
      await expect(h.temporal.workflow.getHandle(purgeWorkflowId(nodeId)).describe()).rejects.toThrow();

      await h.startWorker();
      expect(await workflowResult(h, purgeWorkflowId(nodeId), started.body.operation.id)).toBe('purged');
      expect(
        await operationWhen(h, started.body.operation.id, (op) => op.status !== 'running'),
      ).toMatchObject({
        status: 'succeeded',
        progress: { phase: 'purged' },
      });
      expect((await readNode(h, nodeId)).deletedAt).toEqual(expect.any(String));
      expect(await eventsOf(h, nodeId, 'node.purged')).toHaveLength(1);
      expect(await eventsOf(h, nodeId, 'node.purge.refused')).toEqual([]);
    } finally {
      if (!h.worker) await h.startWorker();
    }
  });
});
