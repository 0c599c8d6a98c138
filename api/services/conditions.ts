import { clearConditionByHand } from '../../db/conditions';
import type { NodeView } from '../../db/nodes';
import type { AppDeps } from '../env';
import type { NodeTarget } from '../node-route';

/**
 * An operator clears a true condition of a node by hand, in one transaction (db/conditions.ts):
 * the node's remediation is woken through the outbox as on the agent's clear, so one waiting for
 * that condition sees it cleared.
 */
export function clearNodeCondition(
  deps: Pick<AppDeps, 'db'>,
  target: NodeTarget & { type: string; reason: string },
): Promise<NodeView> {
  return deps.db.transaction((tx) => clearConditionByHand(tx, target));
}
