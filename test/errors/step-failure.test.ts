import { eq, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Tx } from '../../db/client';
import { classifyDatabaseError } from '../../db/errors';
import { requestDecommission } from '../../db/requests/decommission';
import { requestDrain } from '../../db/requests/drain';
import { requestPurge } from '../../db/requests/purge';
import { requestRemediation } from '../../db/requests/remediation';
import { nodes, operations, workflowOutbox } from '../../db/schema';
import { DrydockError } from '../../domain/errors';
import {
  decommissionWorkflowId,
  drainWorkflowId,
  livenessProgressQuery,
  purgeWorkflowId,
  remediationWorkflowId,
} from '../../workflows/definitions';
import { ensureLivenessSweep } from '../../workflows/liveness-client';
import { joinedNode } from '../support/agents';
import {
  joinedPoolNode,
  pollCommands,
  purge,
  seedPoolNode,
  setNode,
  workflowResult,
} from '../support/builders';
import { executeFromPreview, preview, retiredNode } from '../support/decommission';
import { call, eventsOf, seedNode, seedPool } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { agentOf } from '../support/remediation';

const h = useHarness();

const NUL_REASON = 'replace PSU\u0000';
const operationsOf = (nodeId: string) => h.db.select().from(operations).where(eq(operations.nodeId, nodeId));
const nodeRow = async (nodeId: string) => (await h.db.select().from(nodes).where(eq(nodes.id, nodeId)))[0]!;
const result = (workflowId: string) => workflowResult(h, workflowId);

/**
 * A request that skips the route (and its schema), so its transaction meets the database's refusal:
 * the error the API maps (db/errors.ts), or a note that it went through.
 */
async function request(run: (tx: Tx) => Promise<unknown>): Promise<unknown> {
  return h.db.transaction(run).then(
    () => {
      throw new Error('the request was not refused');
    },
    (error: unknown) => classifyDatabaseError(error),
  );
}

// Injects a permanent failure into the last step of a flow: the database refuses to mark the
// operations of the nodes listed in `doomed` succeeded (a check violation, as a real constraint would).
beforeAll(async () => {
  await h.db.execute(sql`create table doomed (node_id text primary key)`);
  await h.db.execute(
    sql.raw(`create function refuse_success() returns trigger language plpgsql as $$
      begin
        if new.status = 'succeeded' and exists (select 1 from doomed where node_id = new.node_id) then
          raise exception 'injected: success refused' using errcode = 'check_violation';
        end if;
        return new;
      end $$`),
  );
  await h.db.execute(
    sql`create trigger refuse_success before update on operations for each row execute function refuse_success()`,
  );
});
const doom = (nodeId: string) => h.db.execute(sql`insert into doomed values (${nodeId})`);
const spare = (nodeId: string) => h.db.execute(sql`delete from doomed where node_id = ${nodeId}`);

describe('a request the database refuses changes nothing', () => {
  it('drain, purge, decommission and remediation: INVALID_INPUT, nothing recorded, no workflow started', async () => {
    await seedPool(h, { id: 'pool-b', tenantId: 'acme', policy: { maxUnhealthy: 10 } });
    const drained = await seedNode(h, { poolId: 'pool-b', tenantId: 'acme' });
    const purged = await seedNode(h, { poolId: 'pool-b', tenantId: 'acme' });
    const remediated = await seedNode(h, { poolId: 'pool-b', tenantId: 'acme' });
    await setNode(h, remediated, {
      conditions: [{ type: 'GpuXidError', status: true, reason: 'xid-79', since: new Date().toISOString() }],
    });
    const retired = (await retiredNode(h, 'pool-b')).nodeId;
    const p = (await preview(h, retired)).body;
    const asked = { actor: 'test', reason: NUL_REASON };

    const cases: [string, string, (tx: Tx) => Promise<unknown>][] = [
      ['drain', drained, (tx) => requestDrain(tx, drained, { ...asked, deadline: null })],
      ['purge', purged, (tx) => requestPurge(tx, purged, { ...asked, force: false }, h.deps.purgeSigner)],
      [
        'remediation',
        remediated,
        (tx) => requestRemediation(tx, remediated, { ...asked, condition: 'GpuXidError', automatic: false }),
      ],
      [
        'decommission',
        retired,
        (tx) =>
          requestDecommission(tx, retired, {
            ...asked,
            confirm: p.hostname,
            nodeGeneration: p.nodeGeneration,
            dependencyDigest: p.dependencyDigest,
            operator: 'alice',
          }),
      ],
    ];
    for (const [kind, nodeId, run] of cases) {
      const before = await nodeRow(nodeId);
      const eventsBefore = await eventsOf(h, nodeId);
      const refused = await request(run);
      expect(refused, kind).toBeInstanceOf(DrydockError);
      expect(refused, kind).toMatchObject({ code: 'INVALID_INPUT' });
      expect(await operationsOf(nodeId), kind).toEqual([]);
      expect((await nodeRow(nodeId)).version, kind).toBe(before.version);
      expect(await eventsOf(h, nodeId), kind).toEqual(eventsBefore);
    }
    expect(await h.db.select().from(workflowOutbox), 'nothing for Temporal').toEqual([]);

    // The refused drain left nothing behind: a valid drain starts afresh and finishes.
    const valid = await call(h, 'POST', `/v1/nodes/${drained}/drain`, { body: { reason: 'replace PSU' } });
    expect(valid.status).toBe(202);
    expect(await result(drainWorkflowId(drained))).toBe('drained');
  });
});

describe('a later step that fails for good ends the operation failed', () => {
  it('drain: operation failed with the reason, draining lifted (still cordoned), one node.drain.failed', async () => {
    const nodeId = await seedPoolNode(h, 'pool-d');
    await doom(nodeId);
    const started = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`, { body: { reason: 'replace PSU' } });
    expect(started.status).toBe(202);
    expect(await result(drainWorkflowId(nodeId))).toBe('failed');
    const [op, ...more] = await operationsOf(nodeId);
    expect(more).toEqual([]);
    expect(op).toMatchObject({
      id: started.body.operation.id,
      status: 'failed',
      error: {
        code: 'INVALID_INPUT',
        step: 'lookAtDrain',
        reason: expect.stringContaining('cannot be stored'),
      },
      completedAt: expect.any(Date),
    });
    expect(await nodeRow(nodeId)).toMatchObject({ cordoned: true, noScheduleReasons: [] });
    expect((await eventsOf(h, nodeId)).map((e) => e.type)).toEqual(['node.draining', 'node.drain.failed']);

    // The next drain starts afresh: a new operation, and it drains.
    await spare(nodeId);
    const again = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`, { body: { reason: 'again' } });
    expect(again.status).toBe(202);
    expect(again.body.operation.id).not.toBe(op!.id);
    expect(await workflowResult(h, drainWorkflowId(nodeId), again.body.operation.id)).toBe('drained');
    expect(await eventsOf(h, nodeId, 'node.drain.failed')).toHaveLength(1);
  });

  it('purge: the ack cannot be recorded; operation failed, the node stays purging, not forgotten', async () => {
    const { nodeId, credential } = await joinedPoolNode(h, 'pool-p');
    await doom(nodeId);
    const started = await purge(h, nodeId);
    expect(started.status).toBe(202);
    const [command] = (await pollCommands(h, credential)).body.items;
    await agentOf(h, credential).ack(command.id);
    expect(await result(purgeWorkflowId(nodeId))).toBe('failed');
    const [op, ...more] = await operationsOf(nodeId);
    expect(more).toEqual([]);
    expect(op).toMatchObject({
      status: 'failed',
      error: { code: 'INVALID_INPUT', step: 'lookAtPurge' },
    });
    expect(await nodeRow(nodeId)).toMatchObject({ provisionState: 'purging', deletedAt: null });
    expect((await eventsOf(h, nodeId, 'node.purge')).map((e) => e.type)).toEqual(['node.purge.requested']);
  });

  it('decommission: finalize refused; operation failed, the node stays decommissioning, no node.decommissioned', async () => {
    await seedPool(h, { id: 'pool-x', tenantId: 'acme' });
    const { nodeId } = await retiredNode(h, 'pool-x');
    await doom(nodeId);
    const { reply } = await executeFromPreview(h, nodeId);
    expect(reply.status).toBe(202);
    expect(await result(decommissionWorkflowId(nodeId))).toBe('failed');
    const [op, ...more] = await operationsOf(nodeId);
    expect(more).toEqual([]);
    expect(op).toMatchObject({
      status: 'failed',
      error: { code: 'INVALID_INPUT', step: 'finalizeDecommission' },
    });
    expect(await nodeRow(nodeId)).toMatchObject({ provisionState: 'decommissioning' });
    expect(await eventsOf(h, nodeId, 'node.decommissioned')).toEqual([]);
  });

  it('remediation: success cannot be recorded; escalated to maintenance once, operation failed', async () => {
    await seedPool(h, { id: 'pool-r', tenantId: 'acme', kind: 'provider', policy: { maxUnhealthy: 5 } });
    const { nodeId, credential } = await joinedNode(h, 'pool-r');
    await doom(nodeId);
    const agent = agentOf(h, credential);
    expect((await agent.report('GpuXidError', true, 'xid-79')).body.remediation).toMatchObject({
      status: 'pending',
    });
    await agent.report('GpuXidError', false);
    expect(await result(remediationWorkflowId(nodeId))).toBe('escalated');
    const [op, ...more] = await operationsOf(nodeId);
    expect(more).toEqual([]);
    expect(op).toMatchObject({
      status: 'failed',
      error: { reason: expect.stringContaining('succeedRemediation failed') },
    });
    expect(await nodeRow(nodeId)).toMatchObject({ maintenance: true });
    expect((await eventsOf(h, nodeId, 'node.remediation.')).map((e) => e.type)).toEqual([
      'node.remediation.attempted',
      'node.remediation.escalated',
    ]);
  });
});

/**
 * How long the controller may take to record a sweep's outcome: a timer (200 ms asked, which the dev
 * server fires after about a second), two workflow tasks, one transaction and the query. About a
 * second on an idle machine; each of these steps slows with the CPU it gets, to 6 s measured beside
 * the soak test (load 20) and past 10 s once in CI (load 12), with no retry or timeout in the
 * workflow's history. A budget for a loaded machine, not a latency claim.
 */
const SWEEP_RECORDED_MS = 30_000;
/** One query a sweep, not twenty: the polling itself takes the worker's and the server's time. */
const POLL_MS = 200;

describe('the liveness controller meets a sweep that fails for good', () => {
  it('records the failure and keeps sweeping; once the cause is gone, sweeps succeed again', async () => {
    // Every sweep writes its time to controller_state: refuse that write, as a broken row would.
    await h.db.execute(
      sql.raw(`create function refuse_sweep() returns trigger language plpgsql as $$
        begin
          raise exception 'injected: sweep refused' using errcode = 'check_violation';
        end $$`),
    );
    await h.db.execute(
      sql`create trigger refuse_sweep before insert or update on controller_state for each row execute function refuse_sweep()`,
    );
    const workflowId = `liveness-${h.taskQueue}`;
    await ensureLivenessSweep(h.temporal, h.taskQueue, {
      workflowId,
      settings: {
        sweepEveryMs: 200,
        leaseMs: 60_000,
        sessionTimeoutMs: 60_000,
        outageMs: 60_000,
        graceMs: 0,
      },
    });
    const handle = h.temporal.workflow.getHandle(workflowId);
    try {
      const failed = await eventually(
        async () => {
          const progress = await handle.query(livenessProgressQuery);
          return progress.lastFailure ? progress : undefined;
        },
        SWEEP_RECORDED_MS,
        POLL_MS,
      );
      expect(failed).toMatchObject({ sweeps: 0, lastFailure: { code: 'INVALID_INPUT' } });
      // It keeps sweeping: the next sweep fails again, later.
      const again = await eventually(
        async () => {
          const progress = await handle.query(livenessProgressQuery);
          return progress.lastFailure!.at > failed.lastFailure!.at ? progress : undefined;
        },
        SWEEP_RECORDED_MS,
        POLL_MS,
      );
      expect(again).toMatchObject({ sweeps: 0, lastFailure: { code: 'INVALID_INPUT' } });
      expect((await handle.describe()).status.name).toBe('RUNNING');

      await h.db.execute(sql`drop trigger refuse_sweep on controller_state`);
      const recovered = await eventually(
        async () => {
          const progress = await handle.query(livenessProgressQuery);
          return progress.sweeps > 0 ? progress : undefined;
        },
        SWEEP_RECORDED_MS,
        POLL_MS,
      );
      expect(recovered.lastSweepAt).not.toBeNull();
      expect((await handle.describe()).status.name).toBe('RUNNING');
    } finally {
      await handle.terminate('test over');
    }
  });
});
