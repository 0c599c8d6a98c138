import { assertControllable } from '../../domain/controls';
import { DrydockError } from '../../domain/errors';
import { stepText, type MaintenancePlan } from '../../domain/maintenance';
import type { MaintenanceWaitingFor } from '../../domain/maintenance-progress';
import type { Tx } from '../client';
import { applyNodeChange } from '../nodes';
import { appendEvent } from '../events';
import { requestOperation, type OperationRequest, type Requested } from './record';

/** A maintenance's request: the plan it carries out on the node. */
export interface MaintenanceRequest extends OperationRequest {
  plan: MaintenancePlan;
}

/**
 * A node's maintenance (docs/lifecycle/maintenance.md), in the caller's transaction: the node
 * cordoned for its length (`node.cordoned` when it was not), the operation `pending` with its plan
 * and every step not begun, `node.maintenance.started`, the workflow's start in the outbox. An open
 * maintenance of the node is joined; a blocked node or one not in service is refused.
 */
export function requestMaintenance(tx: Tx, nodeId: string, request: MaintenanceRequest): Promise<Requested> {
  return requestOperation(tx, nodeId, request, {
    kind: 'maintenance',
    async admit(_tx, node) {
      assertControllable(node);
      if (node.access === 'blocked') {
        throw new DrydockError(
          'INVALID_STATE',
          `node ${node.id} is blocked: its agent runs nothing; unblock it first (drydock nodes unblock ${node.id})`,
          { access: node.access },
        );
      }
      if (node.provisionState !== 'adopted') {
        throw new DrydockError(
          'INVALID_STATE',
          `node ${node.id} is ${node.provisionState}: only an adopted node is maintained`,
          { provisionState: node.provisionState },
        );
      }
    },
    record: () => {
      const waitingFor: MaintenanceWaitingFor = {
        step: 0,
        steps: request.plan.steps.map((step) => ({
          step: stepText(step),
          outcome: null,
          startedAt: null,
          endedAt: null,
        })),
        parentOperationId: request.parentOperationId ?? null,
      };
      return { result: { plan: request.plan }, waitingFor };
    },
    async apply(tx, node, operation) {
      const context = { actor: request.actor, reason: request.reason, operationId: operation.id };
      const fenced = node.cordoned
        ? node
        : await applyNodeChange(
            tx,
            node,
            { patch: { cordoned: true }, event: { type: 'node.cordoned' } },
            context,
          );
      await appendEvent(tx, {
        nodeId: node.id,
        tenantId: node.tenantId,
        type: 'node.maintenance.started',
        ...context,
        data: {
          steps: request.plan.steps.map(stepText),
          parentOperationId: request.parentOperationId ?? null,
        },
      });
      return { node: fenced };
    },
  });
}
