import type { Db, Tx } from '../db/client';
import { labelsOf, lockNode, nodeView, type NodeRow } from '../db/nodes';
import {
  findOperation,
  insertOperation,
  openOperation,
  operationOfKey,
  operationView,
  type OperationRow,
} from '../db/operations';
import type { OperationKind } from '../domain/operation';
import type { BeginInput, BeginRequest, BeginResult, LifecycleKind } from '../workflows/definitions';

/** What is particular to one kind's begin; `beginOperation` does what every begin does. */
export interface BeginPlan<A extends BeginResult> {
  kind: LifecycleKind;
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
  /**
   * A change every begin of a new request makes under the node's lock, before an open operation is
   * joined (a remediation records an operator's condition): the node as it now is.
   */
  prepare?: (tx: Tx, node: NodeRow) => Promise<NodeRow>;
  /** The checks under the node's lock: throws a refusal, or names an earlier operation to answer. */
  admit: (tx: Tx, node: NodeRow) => Promise<OperationRow | undefined | void>;
  /** The new operation's `result`, when it has one from the start (made once admitted). */
  result?: Record<string, unknown> | ((node: NodeRow) => Record<string, unknown>);
  /** The begin's change once its operation is recorded: the node as it now is, the operation if changed. */
  apply: (
    tx: Tx,
    node: NodeRow,
    operation: OperationRow,
  ) => Promise<{ node: NodeRow; operation?: OperationRow }>;
  /** The kind's answer, from the plain one and the operation it names. */
  answer?: (result: BeginResult, operation: OperationRow) => A;
}

/**
 * A lifecycle begin, in one transaction (docs/architecture.md, rules 1, 2 and 4): lock the node;
 * answer the operation this begin already created, its Idempotency-Key's or the open one; else
 * admit, record the operation `running` under the id the API minted, and apply the change.
 */
export function beginOperation<R extends BeginRequest, A extends BeginResult = BeginResult>(
  db: Db,
  input: BeginInput<R>,
  plan: BeginPlan<A>,
): Promise<A> {
  return db.transaction(async (tx) => {
    const answer = async (operation: OperationRow, node: NodeRow, created: boolean): Promise<A> => {
      const result = {
        operation: operationView(operation),
        node: nodeView(node, await labelsOf(tx, node.id)),
        created,
      };
      return plan.answer ? plan.answer(result, operation) : (result as A);
    };
    const locked = await lockNode(tx, input.nodeId);
    const earlier = await answeredBefore(tx, input);
    if (earlier) return answer(earlier.operation, locked, earlier.created);
    const node = plan.prepare ? await plan.prepare(tx, locked) : locked;
    const open = plan.open === false ? undefined : await openOperation(tx, node.id, plan.kind);
    const stale = open && plan.open ? plan.open.staleWhen(node) : false;
    if (open && !stale) return answer(open, node, false);
    const admitted = await plan.admit(tx, node);
    if (admitted) return answer(admitted, node, false);
    if (open && plan.open) await plan.open.end(tx, open, node);
    const operation = await recordOperation(tx, input, {
      kind: plan.kind,
      nodeId: node.id,
      poolId: node.poolId,
      result: typeof plan.result === 'function' ? plan.result(node) : plan.result,
    });
    const applied = await plan.apply(tx, node, operation);
    return answer(applied.operation ?? operation, applied.node, true);
  });
}

/** What a begin's request leaves on the operation it records (a node's begin, or a pool's). */
type BegunBy = BeginRequest & { workflowId: string; operationId: string };

/**
 * What every begin answers first, under its subject's lock: the operation it created on an earlier
 * run of itself (answered as created), or the one its Idempotency-Key already stands for.
 */
export async function answeredBefore(
  tx: Tx,
  input: BegunBy,
): Promise<{ operation: OperationRow; created: boolean } | undefined> {
  const mine = await findOperation(tx, input.operationId);
  if (mine) return { operation: mine, created: true };
  const retried = await operationOfKey(tx, input);
  return retried ? { operation: retried, created: false } : undefined;
}

/** Records the operation a begin creates, `running`, under the id the API minted, with its key. */
export function recordOperation(
  tx: Tx,
  input: BegunBy,
  subject: {
    kind: OperationKind;
    nodeId: string | null;
    poolId: string | null;
    result?: Record<string, unknown>;
  },
): Promise<OperationRow> {
  return insertOperation(tx, {
    id: input.operationId,
    kind: subject.kind,
    nodeId: subject.nodeId,
    poolId: subject.poolId,
    status: 'running',
    workflowId: input.workflowId,
    actor: input.actor,
    reason: input.reason,
    idempotencyScope: input.idempotencyScope,
    idempotencyKey: input.idempotencyKey,
    requestHash: input.requestHash,
    ...(subject.result ? { result: subject.result } : {}),
  });
}
