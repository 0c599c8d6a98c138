import { DrydockError } from '../../domain/errors';
import { remediationPlan } from '../../domain/remediation';
import type { Principal } from '../../domain/principal';
import { reportCondition } from '../../db/conditions';
import type { NodeRow } from '../../db/nodes';
import type { OperationView } from '../../db/operations';
import { findPool } from '../../db/queries/pools';
import {
  remediationWakeSignal,
  remediationWorkflow,
  remediationWorkflowId,
  type BeginResult,
} from '../../workflows/definitions';
import type { AppDeps } from '../env';
import { signalIfRunning, startOperation, workflowStatus } from '../workflows';

export interface RemediationRequest {
  condition: string;
  automatic: boolean;
  reason: string | null;
}

/**
 * Starts (or joins) remediation/<nodeId> for a condition; see workflows/remediation.ts. An
 * operator's condition the node has not reported is recorded by the begin. A report of another
 * condition while a remediation runs joins it (its operation is the answer) and waits for its own
 * after it. An operator's `Idempotency-Key` is bound to the condition and the reason.
 */
export function startRemediation(
  deps: AppDeps,
  node: NodeRow,
  principal: Principal,
  request: RemediationRequest,
  idempotencyKey?: string,
): Promise<BeginResult> {
  return startOperation(deps, remediationWorkflow, {
    node,
    principal,
    request,
    idempotency: {
      key: idempotencyKey,
      binds: { condition: request.condition, automatic: request.automatic, reason: request.reason },
    },
    summary: `remediate ${request.condition} on ${node.hostname} (${node.id})${request.reason ? `: ${request.reason}` : ''}`,
  });
}

/**
 * Records an agent's condition report; a true condition no remediation has handled yet starts (or
 * joins) one, and one that cleared wakes the running remediation so it can see it. The answer
 * carries the pool policy's `healthyAfter` for that condition type (the agent damps clears by it).
 * When Temporal cannot take the start and no remediation runs, the report stands and the answer is
 * UNAVAILABLE: the agent reports again, and that report starts the remediation.
 */
export async function reportNodeCondition(
  deps: AppDeps,
  node: NodeRow,
  principal: Principal,
  condition: { type: string; status: boolean; reason: string | null },
) {
  const report = await reportCondition(deps.db, node.id, condition);
  let remediation: OperationView | null = null;
  if (report.unhandled) {
    try {
      const request = { condition: condition.type, automatic: true, reason: condition.reason };
      remediation = (await startRemediation(deps, report.node, principal, request)).operation;
    } catch (error) {
      if (!(error instanceof DrydockError)) throw error;
      // A refusal (the node cannot be remediated now) leaves the report standing as it is. So does
      // a start Temporal did not confirm while the node's remediation workflow runs: it takes the
      // condition up from the database (its pending begin, or its queue when it ends). Otherwise
      // nothing will: the agent is told to report again.
      if (error.code === 'UNAVAILABLE' && !(await remediationRuns(deps, node.id))) {
        throw new DrydockError(
          'UNAVAILABLE',
          'the condition is recorded, but Temporal did not start its remediation: report it again to start it',
          {},
          { cause: error },
        );
      }
    }
  }
  if (report.cleared) {
    await signalIfRunning(deps, remediationWorkflowId(node.id), remediationWakeSignal.name);
  }
  const pool = report.node.poolId ? await findPool(deps.db, report.node.poolId) : undefined;
  const { healthyAfterMs } = remediationPlan(condition.type, pool?.policy.remediation);
  return {
    nodeId: node.id,
    conditions: report.node.conditions,
    remediation,
    healthyAfterSeconds: Math.ceil(healthyAfterMs / 1000),
  };
}

/** Whether the node's remediation workflow runs; false too when Temporal cannot say. */
async function remediationRuns(deps: AppDeps, nodeId: string): Promise<boolean> {
  try {
    return (await workflowStatus(deps.temporal, remediationWorkflowId(nodeId))) === 'RUNNING';
  } catch {
    return false;
  }
}
