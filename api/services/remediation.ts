import { DrydockError } from '../../domain/errors';
import { actorOf, type Principal } from '../../domain/principal';
import { remediationPlan } from '../../domain/remediation';
import { reportCondition } from '../../db/conditions';
import type { NodeRow } from '../../db/nodes';
import { operationView, type OperationView } from '../../db/operations';
import { findPool } from '../../db/queries/pools';
import { requestRemediation } from '../../db/requests/remediation';
import type { AppDeps } from '../env';

/**
 * Records an agent's condition report, in one transaction: a true condition no remediation has
 * handled yet requests one (or waits behind the one that runs), and one that cleared wakes the
 * running remediation so it sees it (`turnConditionFalse` in db/conditions.ts). The answer carries the pool policy's `healthyAfter` for that
 * condition type (the agent damps clears by it).
 */
export async function reportNodeCondition(
  deps: Pick<AppDeps, 'db'>,
  node: NodeRow,
  principal: Principal,
  condition: { type: string; status: boolean; reason: string | null },
) {
  const { report, remediation } = await deps.db.transaction(async (tx) => {
    const report = await reportCondition(tx, node.id, condition);
    let remediation: OperationView | null = null;
    if (report.unhandled) {
      // In a savepoint: a refusal (the node cannot be remediated now) leaves the report standing.
      const request = { actor: actorOf(principal), reason: condition.reason, condition: condition.type };
      try {
        const requested = await tx.transaction((savepoint) =>
          requestRemediation(savepoint, node.id, { ...request, automatic: true }),
        );
        remediation = operationView(requested.operation);
      } catch (error) {
        if (!(error instanceof DrydockError)) throw error;
      }
    }
    return { report, remediation };
  });
  const pool = report.node.poolId ? await findPool(deps.db, report.node.poolId) : undefined;
  const { healthyAfterMs } = remediationPlan(condition.type, pool?.policy.remediation);
  return {
    nodeId: node.id,
    conditions: report.node.conditions,
    remediation,
    healthyAfterSeconds: Math.ceil(healthyAfterMs / 1000),
  };
}
