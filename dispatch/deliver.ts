import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { SearchAttributePair, TypedSearchAttributes } from '@temporalio/common';
import { eq, inArray } from 'drizzle-orm';
import { OPERATION_WORKFLOWS } from '../domain/operation';
import type { Db } from '../db/client';
import { nodes, operations, type workflowOutbox } from '../db/schema';
import {
  HostnameKey,
  LifecycleOperationKey,
  NodeIdKey,
  OperationIdKey,
  ParentOperationIdKey,
  PoolIdKey,
  TenantIdKey,
} from '../workflows/search-attributes';

export type OutboxRow = typeof workflowOutbox.$inferSelect;

/**
 * How a delivery went: done (the row can go), or to be tried again — `blocked` soon (the previous
 * run of the workflow id is closing), `failed` with a backoff (Temporal away or refusing).
 */
export type Delivery = { outcome: 'done' } | { outcome: 'blocked' | 'failed'; error: string };

/** How long one call to Temporal may take. */
const CALL_TIMEOUT_MS = 10_000;

/** What a start needs to know beyond the row: the operation and the node or pool it runs on. */
export interface StartPoint {
  op: typeof operations.$inferSelect;
  node: { hostname: string; tenantId: string | null } | null;
}

/**
 * Starts the workflow of a recorded operation: its type and id from its kind, its argument the
 * operation and its subject, the search attributes the Temporal UI filters by, and a summary that
 * names the subject and the reason. `point` is the operation as read when its row was claimed (see
 * `startPoints`): one no longer pending needs no start (it began, or ended before any worker took
 * it). A workflow id already running is this operation's own start (done) or the previous
 * operation's run, which was woken and is closing (blocked: try again).
 */
export async function deliverStart(
  temporal: Client,
  taskQueue: string,
  point: StartPoint | undefined,
  fault?: (point: 'before-start' | 'after-start') => void,
): Promise<Delivery> {
  if (!point || point.op.status !== 'pending') return { outcome: 'done' };
  const { op } = point;
  const workflow = OPERATION_WORKFLOWS[op.kind];
  const subject = op.nodeId ? { nodeId: op.nodeId } : { poolId: op.poolId! };
  fault?.('before-start');
  try {
    await temporal.withDeadline(Date.now() + CALL_TIMEOUT_MS, () =>
      temporal.workflow.start(workflow.type, {
        workflowId: op.workflowId,
        taskQueue,
        args: [{ operationId: op.id, ...subject }],
        workflowIdConflictPolicy: 'FAIL',
        typedSearchAttributes: searchAttributes(point) as unknown as TypedSearchAttributes,
        staticSummary: summary(point),
      }),
    );
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    const running = await temporal.withDeadline(Date.now() + CALL_TIMEOUT_MS, () =>
      temporal.workflow.getHandle(op.workflowId).describe(),
    );
    if (running.typedSearchAttributes.get(OperationIdKey) === op.id) return { outcome: 'done' };
    return { outcome: 'blocked', error: `${op.workflowId} still runs for another operation` };
  }
  fault?.('after-start');
  return { outcome: 'done' };
}

/** Wakes a workflow (`wake`, with why); a workflow that does not run has nothing to wake. */
export async function deliverSignal(temporal: Client, row: OutboxRow): Promise<Delivery> {
  try {
    await temporal.withDeadline(Date.now() + CALL_TIMEOUT_MS, () =>
      temporal.workflow.getHandle(row.workflowId).signal(row.signal!, row.reason ?? ''),
    );
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
  }
  return { outcome: 'done' };
}

/** The operations that claimed start rows name, with their nodes, in one query: by operation id. */
export async function startPoints(db: Db, operationIds: string[]): Promise<Map<string, StartPoint>> {
  if (operationIds.length === 0) return new Map();
  const rows = await db
    .select({ op: operations, hostname: nodes.hostname, tenantId: nodes.tenantId })
    .from(operations)
    .leftJoin(nodes, eq(nodes.id, operations.nodeId))
    .where(inArray(operations.id, operationIds));
  return new Map(
    rows.map((row) => [
      row.op.id,
      {
        op: row.op,
        node: row.hostname === null ? null : { hostname: row.hostname, tenantId: row.tenantId },
      },
    ]),
  );
}

/** The search attributes of docs/architecture.md (rule 8), as the operation's record has them. */
function searchAttributes({ op, node }: StartPoint): SearchAttributePair[] {
  return [
    ...(op.nodeId ? [{ key: NodeIdKey, value: op.nodeId }] : []),
    ...(node ? [{ key: HostnameKey, value: node.hostname }] : []),
    { key: TenantIdKey, value: node?.tenantId ?? '' },
    { key: PoolIdKey, value: op.poolId ?? '' },
    { key: LifecycleOperationKey, value: op.kind },
    { key: OperationIdKey, value: op.id },
    ...(op.parentOperationId ? [{ key: ParentOperationIdKey, value: op.parentOperationId }] : []),
  ];
}

/** The workflow's summary in the Temporal UI: `drain gpu-b7-03 (node_…): replace PSU`. */
function summary({ op, node }: StartPoint): string {
  const reason = op.reason ?? 'no reason given';
  if (op.kind === 'pool-drain') {
    const record = op.result as { selector?: string; maxConcurrent?: number } | null;
    const selected = record?.selector || 'every node';
    return `pool-drain ${op.poolId} (${selected}, ${record?.maxConcurrent ?? 1} at a time): ${reason}`;
  }
  const name = node ? `${node.hostname} (${op.nodeId})` : op.nodeId;
  if (op.kind === 'decommission') {
    const operator = (op.result as { operator?: string } | null)?.operator;
    return `decommission ${name}${operator ? ` by ${operator}` : ''}: ${reason}`;
  }
  if (op.kind === 'remediation') {
    const condition = (op.result as { condition?: string } | null)?.condition;
    return `remediate ${condition ?? 'a condition'} on ${name}${op.reason ? `: ${op.reason}` : ''}`;
  }
  return `${op.kind} ${name}: ${reason}`;
}
