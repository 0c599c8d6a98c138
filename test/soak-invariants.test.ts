import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkInvariants } from '../scripts/soak/invariants';
import { eventually, useHarness } from './support/harness';

// No worker: a workflow started on this file's queue stays running, as a stuck one would.
const h = useHarness({ worker: false });
let sql: postgres.Sql;

beforeAll(() => {
  sql = postgres(h.databaseUrl, { max: 2, onnotice: () => {} });
});
afterAll(async () => {
  await sql?.end();
});

async function node(id: string, reasons: string[] = []) {
  await sql`insert into nodes (id, pool_id, site_id, hostname, provision_state, cordoned, no_schedule_reasons)
            values (${id}, 'soak-pool', 'fra1', ${id}, 'adopted', ${reasons.length > 0}, ${reasons})`;
}
async function operation(id: string, kind: string, nodeId: string, status: string) {
  await sql`insert into operations (id, kind, node_id, status, workflow_id, actor)
            values (${id}, ${kind}, ${nodeId}, ${status}, ${`${kind}/${nodeId}`}, 'key:soak')`;
}
async function event(
  type: string,
  nodeId: string,
  operationId: string | null,
  data: object = {},
  actor = 'key:soak',
) {
  await sql`insert into events (node_id, type, actor, operation_id, data)
            values (${nodeId}, ${type}, ${actor}, ${operationId}, ${sql.json(data as postgres.JSONValue)})`;
}
async function allocation(id: string, nodeId: string, releasedBy: string | null) {
  await sql`insert into allocations (id, node_id, tenant_id, kind, released_at, released_by)
            values (${id}, ${nodeId}, 'acme', 'job', ${releasedBy ? sql`now()` : null}, ${releasedBy})`;
}

describe('soak invariants', () => {
  it('report nothing for a run that ended well', async () => {
    await sql`insert into pools (id, kind, site_id) values ('soak-pool', 'bare-metal', 'fra1')`;
    // A drain that finished by a client's release, and one still running with its reason on.
    await node('node_good', []);
    await operation('op_good', 'drain', 'node_good', 'succeeded');
    await event('node.draining', 'node_good', 'op_good');
    await event('node.drained', 'node_good', 'op_good');
    await allocation('alloc_client', 'node_good', 'key:tenant');
    await node('node_forced');
    await operation('op_forced', 'drain', 'node_forced', 'succeeded');
    await allocation('alloc_forced', 'node_forced', 'drain');
    await event(
      'allocation.force-released',
      'node_forced',
      'op_forced',
      { allocationId: 'alloc_forced' },
      'drain',
    );
    await event('node.drained', 'node_forced', 'op_forced');
    expect(await checkInvariants(sql, { temporal: h.temporal, taskQueue: h.taskQueue })).toEqual([]);
  });

  it('report one line for each kind of violation', async () => {
    await operation('op_open', 'remediation', 'node_good', 'running');
    await node('node_silent');
    await operation('op_silent', 'drain', 'node_silent', 'succeeded');
    await node('node_twice');
    await operation('op_twice', 'purge', 'node_twice', 'succeeded');
    await event('node.purged', 'node_twice', 'op_twice');
    await event('node.purge.cancelled', 'node_twice', 'op_twice');
    await node('node_stale', ['draining']);
    await allocation('alloc_double', 'node_forced', 'drain');
    await event(
      'allocation.force-released',
      'node_forced',
      'op_forced',
      { allocationId: 'alloc_double' },
      'drain',
    );
    await event(
      'allocation.force-released',
      'node_forced',
      'op_forced',
      { allocationId: 'alloc_double' },
      'drain',
    );
    await allocation('alloc_both', 'node_forced', 'key:tenant');
    await event(
      'allocation.force-released',
      'node_forced',
      'op_forced',
      { allocationId: 'alloc_both' },
      'drain',
    );
    const stuck = await h.temporal.workflow.start('drain', {
      workflowId: `soak-stuck-${h.taskQueue}`,
      taskQueue: h.taskQueue,
      args: [{}],
    });

    const visibility = { temporal: h.temporal, taskQueue: h.taskQueue };
    const violations = await eventually(async () => {
      const found = await checkInvariants(sql, visibility);
      return found.some((line) => line.includes('soak-stuck')) && found;
    });
    await stuck.terminate('test over');
    expect(violations).toEqual([
      'operation op_open (remediation of node_good) is still running',
      'drain op_silent (succeeded) has 0 terminal events, not 1: none',
      'purge op_twice (succeeded) has 2 terminal events, not 1: node.purged, node.purge.cancelled',
      'node node_stale keeps NoSchedule reason "draining" with no drain running (draining)',
      'allocation alloc_both released more than once: 1 forced release(s) by drain, recorded as released by key:tenant',
      'allocation alloc_double released more than once: 2 forced release(s) by drain, drain, recorded as released by drain',
      `workflow soak-stuck-${h.taskQueue} (drain) is still running`,
    ]);
  });
});
