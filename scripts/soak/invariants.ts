import type { Client } from '@temporalio/client';
import type postgres from 'postgres';
import type { OperationKind } from '../../domain/operation';
import { LIVENESS_SWEEP_WORKFLOW_ID } from '../../workflows/definitions';

/**
 * The events that end an operation of each kind: a finished operation carries exactly one of its
 * kind's. A reconciler closing a record whose workflow died writes `node.operation.abandoned`.
 */
export const TERMINAL_EVENTS: Partial<Record<OperationKind, readonly string[]>> = {
  drain: ['node.drained', 'node.drain.cancelled', 'node.drain.failed', 'node.operation.abandoned'],
  decommission: ['node.decommissioned', 'node.operation.abandoned'],
  purge: ['node.purged', 'node.purge.cancelled', 'node.operation.abandoned'],
  remediation: ['node.remediation.succeeded', 'node.remediation.escalated', 'node.operation.abandoned'],
};

/** Workflows that run for the life of the deployment: never "stuck". */
const LONG_LIVED_WORKFLOWS = new Set([LIVENESS_SWEEP_WORKFLOW_ID]);

/**
 * Everything that must hold once the soak's load has stopped and its operations had time to
 * finish, read from Drydock's database and (when a client is given) Temporal's visibility. Each
 * violation is one readable line; an empty list means the run ended well.
 */
export async function checkInvariants(
  sql: postgres.Sql,
  visibility?: { temporal: Client; taskQueue: string },
): Promise<string[]> {
  const violations = [
    ...(await unfinishedOperations(sql)),
    ...(await terminalEventCounts(sql)),
    ...(await staleDrainingReasons(sql)),
    ...(await allocationsReleasedTwice(sql)),
  ];
  if (visibility) violations.push(...(await runningWorkflows(visibility.temporal, visibility.taskQueue)));
  return violations;
}

async function unfinishedOperations(sql: postgres.Sql): Promise<string[]> {
  const rows = await sql<{ id: string; kind: string; status: string; node_id: string | null }[]>`
    select id, kind, status, node_id from operations where status in ('pending', 'running') order by id`;
  return rows.map((r) => `operation ${r.id} (${r.kind} of ${r.node_id ?? 'no node'}) is still ${r.status}`);
}

async function terminalEventCounts(sql: postgres.Sql): Promise<string[]> {
  const violations: string[] = [];
  for (const [kind, types] of Object.entries(TERMINAL_EVENTS)) {
    const rows = await sql<{ id: string; status: string; count: number; types: string[] }[]>`
      select o.id, o.status, count(e.id)::int as count,
             coalesce(array_agg(e.type order by e.id) filter (where e.id is not null), '{}') as types
      from operations o
      left join events e on e.operation_id = o.id and e.type in ${sql(types as string[])}
      where o.kind = ${kind} and o.status in ('succeeded', 'failed', 'cancelled')
      group by o.id, o.status
      having count(e.id) <> 1
      order by o.id`;
    for (const r of rows) {
      const seen = r.count === 0 ? 'none' : r.types.join(', ');
      violations.push(`${kind} ${r.id} (${r.status}) has ${r.count} terminal events, not 1: ${seen}`);
    }
  }
  return violations;
}

async function staleDrainingReasons(sql: postgres.Sql): Promise<string[]> {
  const rows = await sql<{ id: string; reasons: string[] }[]>`
    select n.id, n.no_schedule_reasons as reasons from nodes n
    where 'draining' = any(n.no_schedule_reasons)
      and not exists (select 1 from operations o
                      where o.node_id = n.id and o.kind = 'drain' and o.status in ('pending', 'running'))
    order by n.id`;
  return rows.map(
    (r) => `node ${r.id} keeps NoSchedule reason "draining" with no drain running (${r.reasons.join(', ')})`,
  );
}

/**
 * A release happens once: a second forced release of the same allocation, or a forced release of
 * one whose recorded releaser is someone else (a client's release and a drain's both took), is a
 * release counted twice.
 */
async function allocationsReleasedTwice(sql: postgres.Sql): Promise<string[]> {
  const rows = await sql<{ id: string; released_by: string | null; forced: number; actors: string[] }[]>`
    select a.id, a.released_by, count(e.id)::int as forced, array_agg(e.actor order by e.id) as actors
    from allocations a
    join events e on e.type = 'allocation.force-released' and e.data->>'allocationId' = a.id
    group by a.id, a.released_by
    having count(e.id) > 1 or bool_or(a.released_by is distinct from e.actor)
    order by a.id`;
  return rows.map(
    (r) =>
      `allocation ${r.id} released more than once: ${r.forced} forced release(s) by ${r.actors.join(', ')}, ` +
      `recorded as released by ${r.released_by ?? 'nobody'}`,
  );
}

async function runningWorkflows(temporal: Client, taskQueue: string): Promise<string[]> {
  const violations: string[] = [];
  const query = `ExecutionStatus="Running" AND TaskQueue="${taskQueue}"`;
  for await (const execution of temporal.workflow.list({ query })) {
    if (LONG_LIVED_WORKFLOWS.has(execution.workflowId)) continue;
    violations.push(`workflow ${execution.workflowId} (${execution.type}) is still running`);
  }
  return violations;
}
