/** The node model: independent axes, each moved by its own control (docs/concepts.md). */

import { isTerminal, type ProvisionState } from './provision';

export { PROVISION_STATES, isTerminal, type ProvisionState } from './provision';

export const ACCESS = ['allowed', 'blocked'] as const;
export type Access = (typeof ACCESS)[number];

export const CONNECTIVITY = ['connected', 'disconnected'] as const;
export type Connectivity = (typeof CONNECTIVITY)[number];

export const LIVENESS = ['alive', 'unreachable', 'lost', 'offline', 'decommissioned'] as const;
export type Liveness = (typeof LIVENESS)[number];

export const DRAINING = 'draining';
/** The NoSchedule reason of a node whose identity was seen on two machines at once. */
export const QUARANTINED = 'quarantined';

export interface Condition {
  type: string;
  status: boolean;
  reason: string | null;
  since: string;
  /**
   * `operator`: set by an operator — recorded true by `POST /v1/nodes/{id}/remediations` for a
   * condition the node had not reported, or cleared by hand (`…/conditions/{type}/clear`, then
   * false with the operator's reason). `scheduler`: a scheduler's view of the node set it
   * (`SchedulerNodeDown`, `PUT /v1/nodes/{id}/schedulers/{source}`). Absent: the node's agent
   * reported it as it is.
   */
  source?: ConditionSource;
}

/** Who set a condition, when not the node's agent. */
export const CONDITION_SOURCES = ['operator', 'scheduler'] as const;
export type ConditionSource = (typeof CONDITION_SOURCES)[number];

/** The axes a control may read or move. */
export interface NodeAxes {
  provisionState: ProvisionState;
  access: Access;
  cordoned: boolean;
  maintenance: boolean;
  noScheduleReasons: string[];
  liveness: Liveness;
  deletedAt: Date | null;
}

export function isDraining(node: Pick<NodeAxes, 'noScheduleReasons'>): boolean {
  return node.noScheduleReasons.includes(DRAINING);
}

/** Why a control may not run on this node at all, or null when the node accepts controls. */
export function controlRefusal(node: Pick<NodeAxes, 'provisionState' | 'deletedAt'>): string | null {
  if (node.deletedAt) return 'the node is deleted';
  if (isTerminal(node.provisionState)) return 'the node is decommissioned';
  return null;
}
