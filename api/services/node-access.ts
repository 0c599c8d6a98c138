import { eq } from 'drizzle-orm';
import { approve, revokeIdentityOf, type Control } from '../../domain/controls';
import { DrydockError } from '../../domain/errors';
import type { Tx } from '../../db/client';
import { revokeIdentity } from '../../db/identity';
import { runAcceptance } from '../../db/acceptance';
import { changeNodeIn, lockNode, readNodeView, type NodeView } from '../../db/nodes';
import { pools } from '../../db/schema';
import { wakeNode } from '../../db/wakeups';
import type { AppDeps } from '../env';
import type { NodeTarget } from '../node-route';

type Deps = Pick<AppDeps, 'db' | 'wakeups' | 'heartbeats'>;

/**
 * Runs, in one transaction, a change that the node's agent must notice at once; when it changed
 * the node, the agent's session is woken in every API process and its heartbeat session forgotten.
 */
async function changeAndWake<R extends { changed: boolean }>(
  deps: Deps,
  nodeId: string,
  change: (tx: Tx) => Promise<R>,
): Promise<R> {
  const result = await deps.db.transaction(async (tx) => {
    const changed = await change(tx);
    if (changed.changed) await wakeNode(tx, nodeId);
    return changed;
  });
  if (result.changed) {
    deps.wakeups.wake(nodeId);
    deps.heartbeats.forget(nodeId);
  }
  return result;
}

/** An access control (block, unblock, reject): the node back, unchanged when already as asked. */
export async function controlAccess(deps: Deps, target: NodeTarget, control: Control): Promise<NodeView> {
  const { view } = await changeAndWake(deps, target.nodeId, (tx) => changeNodeIn(tx, { ...target, control }));
  return view;
}

/**
 * An operator lets a pending node into a pool (the one it asked for unless `poolId` names
 * another), and acceptance runs, in one transaction (db/acceptance.ts): the node is `adopted` when
 * its checks pass, `adopting` while the pool's acceptance action runs or after a check failed, and
 * never approved without its acceptance begun on a crash between the two.
 */
export async function approveNode(deps: Deps, target: NodeTarget & { poolId?: string }): Promise<NodeView> {
  const { view } = await changeAndWake(deps, target.nodeId, async (tx) => {
    const node = await lockNode(tx, target.nodeId, target.principal);
    const poolId = target.poolId ?? node.requestedPoolId;
    if (!poolId) throw new DrydockError('INVALID_INPUT', 'give poolId: the node asked for no pool');
    const [pool] = await tx.select().from(pools).where(eq(pools.id, poolId));
    if (!pool) throw new DrydockError('INVALID_INPUT', `pool ${poolId} does not exist`, { poolId });
    const approved = await changeNodeIn(tx, { ...target, control: approve(pool) });
    const accepted = await runAcceptance(tx, target.nodeId);
    return { changed: approved.changed, view: await readNodeView(tx, accepted) };
  });
  return view;
}

/** Revokes every certificate and credential of the node and raises its identity generation. */
export async function revokeNodeIdentity(deps: Deps, target: NodeTarget) {
  const { view, revokedCertificates } = await changeAndWake(deps, target.nodeId, async (tx) => {
    const node = await lockNode(tx, target.nodeId, target.principal);
    const revoked = await revokeIdentity(tx, target.nodeId, target.reason ?? 'identity revoked');
    const control = revokeIdentityOf(node.identityGeneration, revoked);
    return { ...(await changeNodeIn(tx, { ...target, control })), revokedCertificates: revoked.certificates };
  });
  return { node: view, revokedCertificates };
}
