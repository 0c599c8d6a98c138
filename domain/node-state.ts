import { DRAINING, QUARANTINED, type Access, type Liveness, type ProvisionState } from './node';

/** What a node's one state is decided from (a node row and the API's node both have it). */
export interface NodeStateFields {
  liveness: Liveness;
  access: Access;
  provisionState: ProvisionState;
  cordoned: boolean;
  maintenance: boolean;
  noScheduleReasons: string[];
}

/**
 * A node's one state, the first that holds, worst first: not reachable, shut out, taken out of
 * service, not taking work, waiting for approval, schedulable. The rack map colours a node by it.
 */
export const NODE_STATES = [
  'lost',
  'unreachable',
  'offline',
  'decommissioned',
  'blocked',
  'quarantined',
  'maintenance',
  'draining',
  'cordoned',
  'unhealthy',
  'pending',
  'schedulable',
] as const;
export type NodeState = (typeof NODE_STATES)[number];

export function nodeStateOf(node: NodeStateFields): NodeState {
  if (node.liveness !== 'alive') return node.liveness;
  if (node.access === 'blocked') return 'blocked';
  if (node.noScheduleReasons.includes(QUARANTINED)) return 'quarantined';
  if (node.maintenance) return 'maintenance';
  if (node.noScheduleReasons.includes(DRAINING)) return 'draining';
  if (node.cordoned) return 'cordoned';
  if (node.noScheduleReasons.length > 0) return 'unhealthy';
  if (node.provisionState === 'pending') return 'pending';
  return 'schedulable';
}

/**
 * What the fleet summary counts, each with the `GET /v1/nodes` filter that lists those nodes and
 * the test a node meets: the two agree, so a count is the length of the list its filter gives.
 * A node may be in several (alive and cordoned).
 */
export const NODE_COUNTS = [
  { name: 'alive', filter: { liveness: 'alive' }, has: (n: NodeStateFields) => n.liveness === 'alive' },
  {
    name: 'unreachable',
    filter: { liveness: 'unreachable' },
    has: (n: NodeStateFields) => n.liveness === 'unreachable',
  },
  { name: 'lost', filter: { liveness: 'lost' }, has: (n: NodeStateFields) => n.liveness === 'lost' },
  { name: 'cordoned', filter: { cordoned: 'true' }, has: (n: NodeStateFields) => n.cordoned },
  {
    name: 'draining',
    filter: { noScheduleReason: DRAINING },
    has: (n: NodeStateFields) => n.noScheduleReasons.includes(DRAINING),
  },
  { name: 'maintenance', filter: { maintenance: 'true' }, has: (n: NodeStateFields) => n.maintenance },
  {
    name: 'quarantined',
    filter: { noScheduleReason: QUARANTINED },
    has: (n: NodeStateFields) => n.noScheduleReasons.includes(QUARANTINED),
  },
  {
    name: 'pendingApproval',
    filter: { provisionState: 'pending' },
    has: (n: NodeStateFields) => n.provisionState === 'pending',
  },
] as const;
export type NodeCountName = (typeof NODE_COUNTS)[number]['name'];
