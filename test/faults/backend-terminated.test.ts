import { sql } from 'drizzle-orm';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { drainWorkflowId } from '../../workflows/definitions';
import { readNode, seedPoolNode } from '../support/builders';
import { allocate, call, eventsOf } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';

const h = useHarness();

describe("a Postgres backend terminated in the middle of an activity's transaction", () => {
  it('the drain check that already wrote node.drained is rolled back, retried, and drains once', async () => {
    const nodeId = await seedPoolNode(h, 'pool-pg');
    const allocationId = await allocate(h, nodeId, 'acme');
    const started = await call(h, 'POST', `/v1/nodes/${nodeId}/drain`, { body: { reason: 'pg fault' } });
    expect(started.status).toBe(202);
    const operationId: string = started.body.operation.id;
    await eventually(
      async () => (await call(h, 'GET', `/v1/operations/${operationId}`)).body.progress?.phase === 'waiting',
    );

    // The test holds the operation row: the check that finds the node empty writes the node change
    // and node.drained, then waits on this lock to finish the operation, its transaction open.
    const holder = postgres(h.databaseUrl, { max: 1, onnotice: () => {} });
    const lock = await holder.reserve();
    try {
      await lock`begin`;
      await lock`select id from operations where id = ${operationId} for update`;
      const [{ pid: holderPid }] = (await lock`select pg_backend_pid() as pid`) as unknown as [
        { pid: number },
      ];
      expect((await call(h, 'POST', `/v1/allocations/${allocationId}/release`)).status).toBe(200);

      const blockedBy = async (except?: number) => {
        const rows = await h.db.execute<{ pid: number; query: string }>(
          sql`select pid, query from pg_stat_activity where ${holderPid} = any(pg_blocking_pids(pid))`,
        );
        return rows.find((r) => r.pid !== except);
      };
      const blocked = await eventually(() => blockedBy());
      expect(blocked.query).toMatch(/^update "operations"/);
      const [terminated] = await h.db.execute<{ ok: boolean }>(
        sql`select pg_terminate_backend(${blocked.pid}) as ok`,
      );
      expect(terminated!.ok).toBe(true);
      // The step is retried on another connection, and waits again at the same place.
      const retried = await eventually(() => blockedBy(blocked.pid), 20_000);
      expect(retried.query).toMatch(/^update "operations"/);
      expect(await eventsOf(h, nodeId, 'node.drained')).toEqual([]);
      await lock`rollback`;
    } finally {
      lock.release();
      await holder.end();
    }

    expect(await h.temporal.workflow.getHandle(drainWorkflowId(nodeId)).result()).toBe('drained');
    expect((await eventsOf(h, nodeId)).map((e) => e.type)).toEqual(['node.draining', 'node.drained']);
    const operation = await call(h, 'GET', `/v1/operations/${operationId}`);
    expect(operation.body.status).toBe('succeeded');
    const node = await readNode(h, nodeId);
    expect(node).toMatchObject({ cordoned: true, noScheduleReasons: [] });
  });
});
