import { readopt, type Control } from '../../domain/controls';
import { runAcceptance } from '../../db/acceptance';
import { isDraining } from '../../domain/node';
import { actorOf } from '../../domain/principal';
import { deleteNode } from '../../db/delete-node';
import { cancelOpenDrain } from '../../db/cancellation';
import { changeNodeIn, readNodeView, type NodeView } from '../../db/nodes';
import type { AppDeps } from '../env';
import type { NodeTarget } from '../node-route';

type Deps = Pick<AppDeps, 'db'>;

/**
 * One control on one node, in one transaction (`changeNodeIn`); the node back, unchanged when it
 * already was as asked. A control that ended a drain (uncordon) cancels it there, which wakes its
 * workflow through the outbox; one that put the node back into service gives back its
 * disruption-budget slot (`applyNodeChange`), which wakes the drains waiting for one.
 */
export async function controlNode(deps: Deps, target: NodeTarget, control: Control): Promise<NodeView> {
  const { view } = await deps.db.transaction(async (tx) => {
    const changed = await changeNodeIn(tx, { ...target, control });
    // It ended a drain: the drain's own clean-up, in this transaction, naming the caller.
    if (isDraining(changed.before) && !isDraining(changed.after)) {
      await cancelOpenDrain(tx, changed.after.id, {
        by: actorOf(target.principal),
        reason: target.reason ?? null,
      });
    }
    return changed;
  });
  return view;
}

/**
 * Adopt again: back to `adopting`, then acceptance, in one transaction, so the node never stays
 * `adopting` because a crash came between the two. A node whose checks fail, or whose pool's
 * acceptance action runs, stays `adopting`, out of placement (db/acceptance.ts).
 */
export async function adoptNode(deps: Pick<AppDeps, 'db'>, target: NodeTarget): Promise<NodeView> {
  return deps.db.transaction(async (tx) => {
    await changeNodeIn(tx, { ...target, control: readopt });
    // The version was checked by the first step; acceptance runs on what that step left.
    const accepted = await runAcceptance(tx, target.nodeId, {
      actor: actorOf(target.principal),
      reason: target.reason,
    });
    return readNodeView(tx, accepted);
  });
}

/**
 * Deletes a node (db/delete-node.ts): the operations it interrupts end with it, and their
 * workflows and the drains waiting for the budget slot it gave back are woken, all in its
 * transaction.
 */
export function deleteNodeOf(deps: Deps, target: NodeTarget) {
  return deleteNode(deps.db, target);
}
