import { DrydockError } from '../../domain/errors';
import { newId } from '../../domain/ids';
import { ENDING_KINDS, OPERATION_WORKFLOWS, type OperationKind } from '../../domain/operation';
import { PENDING_PHASE, type OperationProgress } from '../../domain/progress';
import type { Tx } from '../client';
import { lockNode, readNodeView, type NodeRow, type NodeView } from '../nodes';
import {
  findOperation,
  insertOperation,
  openOperation,
  operationOfKey,
  operationView,
  type OperationRow,
  type OperationView,
} from '../operations';
import { enqueueStart } from '../outbox';

// Requesting an operation (docs/architecture.md, rule 4): one transaction records the operation
// `pending` with the change that fences its node, and the start of its workflow in the outbox.
// The API answers as soon as it commits; a worker's dispatcher starts the workflow, which moves the
// operation `running` when it begins. The API, a pool drain's waves and a remediation that ends
// with a condition queued behind it all request operations this one way.

/** Who asks, why, and what their Idempotency-Key binds; every request of every kind carries these. */
export interface OperationRequest {
  actor: string;
  reason: string | null;
  /** The node's version the caller read (`version` or `If-Match`): CONFLICT when it moved on. */
  version?: number;
  /** The caller an Idempotency-Key belongs to, the key and the request's hash; set together. */
  idempotency?: { scope: string; key: string; hash: string } | null;
  /**
   * The operation's id when the requester names it (a pool drain names its node drains', so a wave
   * requested again finds what it recorded); else a new one.
   */
  operationId?: string;
  /** The pool drain a node drain belongs to. */
  parentOperationId?: string;
}

/** What a request answers: the operation it maps to, the node as it left it, whether it created it. */
export interface Requested {
  operation: OperationRow;
  node: NodeRow;
  created: boolean;
}

/** A request's answer as the API shows it. */
export interface RequestedView {
  operation: OperationView;
  node: NodeView;
  created: boolean;
}

/** What is particular to one kind's request; `requestOperation` does what every request does. */
export interface RequestPlan {
  kind: Exclude<OperationKind, 'pool-drain'>;
  /**
   * The node's open operation of this kind is joined (the default), unless `staleWhen` says it is
   * over: then it is ended (`end`) once `admit` let the new one through. `false`: not looked for.
   */
  open?:
    | false
    | {
        staleWhen: (node: NodeRow) => boolean;
        end: (tx: Tx, open: OperationRow, node: NodeRow) => Promise<void>;
      };
  /** A change every new request makes under the node's lock, before an open operation is joined. */
  prepare?: (tx: Tx, node: NodeRow) => Promise<NodeRow>;
  /** The checks under the node's lock: throws a refusal, or names an earlier operation to answer. */
  admit: (tx: Tx, node: NodeRow) => Promise<OperationRow | undefined | void>;
  /** What the new operation's record starts with (made once admitted). */
  record?: (node: NodeRow) => {
    result?: Record<string, unknown>;
    deadline?: Date | null;
    waitingFor?: NonNullable<OperationProgress['waitingFor']>;
  };
  /**
   * The request's change once its operation is recorded: the node as it now is, and the operation
   * when the change already ended it (it then needs no workflow).
   */
  apply: (tx: Tx, node: NodeRow, operation: OperationRow) => Promise<{ node: NodeRow; ended?: OperationRow }>;
}

/**
 * One request, in the caller's transaction: lock the node; answer the operation this request
 * already recorded (its id, or its Idempotency-Key's) or the node's open one; else admit, record
 * the operation `pending` (phase `waiting-for-worker`), apply the change and enqueue its start.
 */
export async function requestOperation(
  tx: Tx,
  nodeId: string,
  request: OperationRequest,
  plan: RequestPlan,
): Promise<Requested> {
  const locked = await lockNode(tx, nodeId);
  const earlier = await recordedBefore(tx, request);
  if (earlier) return { ...earlier, node: locked };
  await refuseWhileEnding(tx, locked, plan.kind);
  const node = plan.prepare ? await plan.prepare(tx, locked) : locked;
  const open = plan.open === false ? undefined : await openOperation(tx, node.id, plan.kind);
  const stale = open && plan.open ? plan.open.staleWhen(node) : false;
  if (open && !stale) return { operation: open, node, created: false };
  const admitted = await plan.admit(tx, node);
  if (admitted) return { operation: admitted, node, created: false };
  if (open && plan.open) await plan.open.end(tx, open, node);
  const operation = await recordOperation(tx, request, {
    kind: plan.kind,
    nodeId: node.id,
    poolId: node.poolId,
    ...plan.record?.(node),
  });
  const applied = await plan.apply(tx, node, operation);
  if (applied.ended) return { operation: applied.ended, node: applied.node, created: true };
  await enqueueStart(tx, operation);
  return { operation, node: applied.node, created: true };
}

/**
 * INVALID_STATE when the node's purge or decommission is open and this request is of another kind:
 * nothing else starts on a node that is leaving (a request of the same kind joins it, as above).
 */
async function refuseWhileEnding(tx: Tx, node: NodeRow, kind: OperationKind): Promise<void> {
  const ending = await openOperation(tx, node.id, ENDING_KINDS);
  if (!ending || ending.kind === kind) return;
  const doing = ending.kind === 'purge' ? 'being purged' : 'being decommissioned';
  throw new DrydockError(
    'INVALID_STATE',
    `node ${node.id} is ${doing} (operation ${ending.id}, ${ending.status}): no ${kind} starts on it ` +
      `until that ends; to keep the node, cancel it first (drydock operations cancel ${ending.id})`,
    { operationId: ending.id, kind: ending.kind, status: ending.status },
  );
}

/**
 * What a request answers first, under its subject's lock: the operation it recorded on an earlier
 * try (by the id it names: created), or the one its Idempotency-Key already stands for.
 */
export async function recordedBefore(
  tx: Tx,
  request: OperationRequest,
): Promise<{ operation: OperationRow; created: boolean } | undefined> {
  const mine = request.operationId ? await findOperation(tx, request.operationId) : undefined;
  if (mine) return { operation: mine, created: true };
  if (!request.idempotency) return undefined;
  const { scope, key, hash } = request.idempotency;
  const retried = await operationOfKey(tx, {
    idempotencyScope: scope,
    idempotencyKey: key,
    requestHash: hash,
  });
  return retried ? { operation: retried, created: false } : undefined;
}

/** Records the operation a request creates: `pending`, waiting for a worker, with its key. */
export function recordOperation(
  tx: Tx,
  request: OperationRequest,
  subject: {
    kind: OperationKind;
    nodeId: string | null;
    poolId: string | null;
    result?: Record<string, unknown>;
    deadline?: Date | null;
    waitingFor?: NonNullable<OperationProgress['waitingFor']>;
  },
): Promise<OperationRow> {
  const { kind, nodeId, poolId, ...record } = subject;
  return insertOperation(tx, {
    id: request.operationId ?? newId('op'),
    kind,
    nodeId,
    poolId,
    status: 'pending',
    phase: PENDING_PHASE,
    workflowId: OPERATION_WORKFLOWS[kind].workflowId(nodeId ?? poolId!),
    actor: request.actor,
    reason: request.reason,
    idempotencyScope: request.idempotency?.scope ?? null,
    idempotencyKey: request.idempotency?.key ?? null,
    requestHash: request.idempotency?.hash ?? null,
    parentOperationId: request.parentOperationId ?? null,
    ...record,
  });
}

/** The request's answer as the API shows it: the operation, and the node with its labels. */
export async function requestedView(tx: Tx, requested: Requested): Promise<RequestedView> {
  return {
    operation: operationView(requested.operation),
    node: await readNodeView(tx, requested.node),
    created: requested.created,
  };
}
