import type { Deadline } from '../../domain/deadline';
import type { MaintenancePlan } from '../../domain/maintenance';
import { actorOf, type Principal } from '../../domain/principal';
import type { Selector } from '../../domain/selector';
import type { NodeRow } from '../../db/nodes';
import { operationView, type OperationView } from '../../db/operations';
import { requestDecommission, type DecommissionRequest } from '../../db/requests/decommission';
import { requestDrain } from '../../db/requests/drain';
import { requestMaintenance } from '../../db/requests/maintenance';
import { requestPoolDrain } from '../../db/requests/pool-drain';
import { requestPoolMaintenance } from '../../db/requests/pool-maintenance';
import { requestPurge } from '../../db/requests/purge';
import { requestedView, type RequestedView } from '../../db/requests/record';
import { requestRemediation } from '../../db/requests/remediation';
import type { PoolRow } from '../../db/queries/pools';
import type { AppDeps } from '../env';
import { idempotencyOf } from '../idempotency';

// The requests that record an operation (docs/architecture.md, rule 4): one transaction each,
// answered as soon as it commits. No call to Temporal: a worker's dispatcher starts the workflow.

type Deps = Pick<AppDeps, 'db' | 'purgeSigner'>;

/** Who asks, and the Idempotency-Key they sent with what it binds. */
interface Asked {
  principal: Principal;
  reason: string | null;
  idempotencyKey?: string | null;
  /** The request's own fields the key is bound to (beside the kind and the subject). */
  binds: Record<string, unknown>;
}

function requestOf(kind: string, subject: Record<string, string>, asked: Asked) {
  return {
    actor: actorOf(asked.principal),
    reason: asked.reason,
    idempotency: idempotencyOf(asked.principal, asked.idempotencyKey, {
      route: kind,
      ...subject,
      ...asked.binds,
    }),
  };
}

/** Drains a node (docs/lifecycle/drain.md); `deadline` is already an absolute time. */
export function drainNode(
  deps: Deps,
  node: NodeRow,
  asked: Asked & { version?: number; deadline: string | null },
): Promise<RequestedView> {
  return deps.db.transaction(async (tx) =>
    requestedView(
      tx,
      await requestDrain(tx, node.id, {
        ...requestOf('drain', { nodeId: node.id }, asked),
        version: asked.version,
        deadline: asked.deadline,
      }),
    ),
  );
}

/** Purges a node (docs/lifecycle/purge.md): the signed command is queued in this transaction. */
export function purgeNode(
  deps: Deps,
  node: NodeRow,
  asked: Asked & { force: boolean },
): Promise<RequestedView> {
  return deps.db.transaction(async (tx) =>
    requestedView(
      tx,
      await requestPurge(
        tx,
        node.id,
        { ...requestOf('purge', { nodeId: node.id }, asked), force: asked.force },
        deps.purgeSigner,
      ),
    ),
  );
}

/** Executes a decommission against its preview (docs/lifecycle/decommission.md). */
export function decommissionNode(
  deps: Deps,
  node: NodeRow,
  asked: Asked & Pick<DecommissionRequest, 'confirm' | 'nodeGeneration' | 'dependencyDigest' | 'operator'>,
): Promise<RequestedView> {
  const { confirm, nodeGeneration, dependencyDigest, operator } = asked;
  return deps.db.transaction(async (tx) =>
    requestedView(
      tx,
      await requestDecommission(tx, node.id, {
        ...requestOf('decommission', { nodeId: node.id }, asked),
        confirm,
        nodeGeneration,
        dependencyDigest,
        operator,
      }),
    ),
  );
}

/**
 * Remediates a condition of a node (docs/lifecycle/remediation.md): an operator's condition the
 * node has not reported is recorded first; a remediation already running is joined, and the
 * condition waits behind it.
 */
export function remediateNode(
  deps: Deps,
  node: NodeRow,
  asked: Asked & { condition: string; automatic: boolean },
): Promise<RequestedView> {
  return deps.db.transaction(async (tx) =>
    requestedView(
      tx,
      await requestRemediation(tx, node.id, {
        ...requestOf('remediation', { nodeId: node.id }, asked),
        condition: asked.condition,
        automatic: asked.automatic,
      }),
    ),
  );
}

/** A node's maintenance (docs/lifecycle/maintenance.md): its plan, step after step. */
export function maintainNode(
  deps: Deps,
  node: NodeRow,
  asked: Asked & { plan: MaintenancePlan },
): Promise<RequestedView> {
  return deps.db.transaction(async (tx) =>
    requestedView(
      tx,
      await requestMaintenance(tx, node.id, {
        ...requestOf('maintenance', { nodeId: node.id }, asked),
        plan: asked.plan,
      }),
    ),
  );
}

/** A rolling maintenance (docs/lifecycle/maintenance.md): the plan on each selected node, a few at a time. */
export async function maintainPool(
  deps: Deps,
  pool: PoolRow,
  asked: Asked & { selector: Selector; plan: MaintenancePlan; maxConcurrent: number; maxFailures: number },
): Promise<{ operation: OperationView; created: boolean }> {
  const requested = await deps.db.transaction((tx) =>
    requestPoolMaintenance(tx, pool.id, {
      ...requestOf('pool-maintenance', { poolId: pool.id }, asked),
      selector: asked.selector,
      plan: asked.plan,
      maxConcurrent: asked.maxConcurrent,
      maxFailures: asked.maxFailures,
    }),
  );
  return { operation: operationView(requested.operation), created: requested.created };
}

/** Drains the nodes of a pool that match a selector, a few at a time (docs/lifecycle/drain.md). */
export async function drainPool(
  deps: Deps,
  pool: PoolRow,
  asked: Asked & { selector: Selector; maxConcurrent: number; deadline: Deadline | null },
): Promise<{ operation: OperationView; created: boolean }> {
  const requested = await deps.db.transaction((tx) =>
    requestPoolDrain(tx, pool.id, {
      ...requestOf('pool-drain', { poolId: pool.id }, asked),
      selector: asked.selector,
      maxConcurrent: asked.maxConcurrent,
      deadline: asked.deadline,
    }),
  );
  return { operation: operationView(requested.operation), created: requested.created };
}
