import { actorOf, type Principal } from '../../domain/principal';
import { remediationPlan } from '../../domain/remediation';
import type { NodeRow } from '../../db/nodes';
import { operationView } from '../../db/operations';
import { findPool } from '../../db/queries/pools';
import { reportAndRemediate } from '../../db/requests/remediation';
import type { AppDeps } from '../env';

/**
 * Records an agent's condition report, in one transaction: a true condition no remediation has
 * handled yet requests one (or waits behind the one that runs), and one that cleared wakes the
 * running remediation so it sees it (`reportAndRemediate` in db/requests/remediation.ts). The
 * answer carries the pool policy's `healthyAfter` for that condition type (the agent damps clears
 * by it).
 */
export async function reportNodeCondition(
  deps: Pick<AppDeps, 'db'>,
  node: NodeRow,
  principal: Principal,
  condition: { type: string; status: boolean; reason: string | null },
) {
  const report = await deps.db.transaction((tx) =>
    reportAndRemediate(tx, node.id, condition, actorOf(principal)),
  );
  const pool = report.node.poolId ? await findPool(deps.db, report.node.poolId) : undefined;
  const { healthyAfterMs } = remediationPlan(condition.type, pool?.policy.remediation);
  return {
    nodeId: node.id,
    conditions: report.node.conditions,
    remediation: report.remediation ? operationView(report.remediation) : null,
    healthyAfterSeconds: Math.ceil(healthyAfterMs / 1000),
  };
}
