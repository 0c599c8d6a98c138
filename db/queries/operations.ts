import { and, desc, eq, inArray, lt, sql, type SQL } from 'drizzle-orm';
import { DrydockError } from '../../domain/errors';
import type { OperationKind, OperationStatus } from '../../domain/operation';
import { OPEN_OPERATION_STATUSES } from '../../domain/operation-status';
import type { Principal } from '../../domain/principal';
import type { OperationProgress } from '../../domain/progress';
import type { DbOrTx } from '../client';
import { nodes, operations } from '../schema';
import { isoOrNull, stamps } from './dates';
import { visibleTo } from './nodes';

export type OperationRow = typeof operations.$inferSelect;

/** The operation record of the API (docs/api.md), its progress as the row has it. */
export function operationView(op: OperationRow) {
  return {
    id: op.id,
    kind: op.kind,
    nodeId: op.nodeId,
    poolId: op.poolId,
    parentOperationId: op.parentOperationId,
    status: op.status,
    workflowId: op.workflowId,
    actor: op.actor,
    reason: op.reason,
    idempotencyKey: op.idempotencyKey,
    progress: progressOf(op),
    result: op.result,
    error: op.error,
    cancellation: op.cancellation ?? null,
    ...stamps(op),
    completedAt: isoOrNull(op.completedAt),
  };
}

/** What the operation is doing, as its record says (domain/progress.ts); its workflow answers the same. */
export function progressOf(op: OperationRow): OperationProgress {
  return {
    kind: op.kind,
    phase: op.phase,
    startedAt: isoOrNull(op.startedAt),
    deadline: isoOrNull(op.deadline),
    nextCheckAt: isoOrNull(op.nextCheckAt),
    waitingFor: op.waitingFor ?? null,
  } as OperationProgress;
}
export type OperationView = ReturnType<typeof operationView>;

/**
 * The unfinished operation of this kind on the node, if one exists (at most one can); of one of
 * these kinds, when given several (`ENDING_KINDS`: the node's open purge or decommission).
 */
export async function openOperation(
  tx: DbOrTx,
  nodeId: string,
  kind: OperationKind | readonly OperationKind[],
): Promise<OperationRow | undefined> {
  const [op] = await tx
    .select()
    .from(operations)
    .where(
      and(
        eq(operations.nodeId, nodeId),
        typeof kind === 'string' ? eq(operations.kind, kind) : inArray(operations.kind, [...kind]),
        inArray(operations.status, OPEN_OPERATION_STATUSES),
      ),
    )
    .limit(1);
  return op;
}

/**
 * What a caller's Idempotency-Key already stands for: the operation it made for this very request
 * (a retry gets it back), nothing when the caller never used the key, or IDEMPOTENCY_KEY_REUSED when
 * the caller used it for another request. Keys of other callers are never looked at.
 */
export async function operationOfKey(
  db: DbOrTx,
  request: { idempotencyScope: string | null; idempotencyKey: string | null; requestHash: string | null },
): Promise<OperationRow | undefined> {
  const { idempotencyScope: scope, idempotencyKey: key } = request;
  if (!scope || !key) return undefined;
  const [op] = await db
    .select()
    .from(operations)
    .where(and(eq(operations.idempotencyScope, scope), eq(operations.idempotencyKey, key)));
  if (op && op.requestHash !== request.requestHash) throw keyReused();
  return op;
}

export function keyReused(): DrydockError {
  return new DrydockError('IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used for another request');
}

export async function findOperation(db: DbOrTx, id: string): Promise<OperationRow | undefined> {
  const [op] = await db.select().from(operations).where(eq(operations.id, id));
  return op;
}

/** Operations on nodes the principal can see, and pool-wide ones (pool drains) of pools it can see. */
function operationVisibleTo(principal: Principal): SQL {
  if (principal.kind === 'operator') return sql`true`;
  if (principal.kind === 'node') return sql`false`;
  return sql`(${operations.nodeId} in (select ${nodes.id} from ${nodes} where ${visibleTo(principal)})
    or (${operations.nodeId} is null and ${operations.poolId} in
      (select id from pools where tenant_id = ${principal.tenantId} or ${principal.tenantId} = any(grants))))`;
}

/** The operation as the principal sees it, or NOT_FOUND. */
export async function getVisibleOperation(
  db: DbOrTx,
  id: string,
  principal: Principal,
): Promise<OperationRow> {
  const [op] = await db
    .select()
    .from(operations)
    .where(and(eq(operations.id, id), operationVisibleTo(principal)));
  if (!op) throw new DrydockError('NOT_FOUND', `operation ${id} not found`, { operationId: id });
  return op;
}

export interface OperationFilter {
  nodeId?: string;
  /** A pool's operations: its pool drains, and those of nodes that were in it when they began. */
  poolId?: string;
  kind?: OperationKind;
  status?: OperationStatus;
  /** The last id of the page before (the list is newest first). */
  before?: string;
  limit: number;
}

/** The operations the principal sees that match, newest first. */
export async function listOperations(
  db: DbOrTx,
  principal: Principal,
  q: OperationFilter,
): Promise<OperationRow[]> {
  return db
    .select()
    .from(operations)
    .where(
      and(
        operationVisibleTo(principal),
        q.nodeId ? eq(operations.nodeId, q.nodeId) : undefined,
        q.poolId ? eq(operations.poolId, q.poolId) : undefined,
        q.kind ? eq(operations.kind, q.kind) : undefined,
        q.status ? eq(operations.status, q.status) : undefined,
        q.before ? lt(operations.id, q.before) : undefined,
      ),
    )
    .orderBy(desc(operations.id))
    .limit(q.limit);
}
