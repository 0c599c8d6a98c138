import type { Schemas } from '@drydock/client';
import { DRAINING, QUARANTINED } from '../domain/node';

type Node = Schemas['Node'];

/**
 * What the overview counts, each as the `GET /v1/nodes` filter that lists those nodes (the node
 * list's query) and the test a node of the overview's read meets: the two agree, so a count is
 * the length of the list it links to.
 */
export const STATE_COUNTS: { name: string; filter: Record<string, string>; has: (node: Node) => boolean }[] =
  [
    { name: 'alive', filter: { liveness: 'alive' }, has: (n) => n.liveness === 'alive' },
    { name: 'unreachable', filter: { liveness: 'unreachable' }, has: (n) => n.liveness === 'unreachable' },
    { name: 'lost', filter: { liveness: 'lost' }, has: (n) => n.liveness === 'lost' },
    { name: 'cordoned', filter: { cordoned: 'true' }, has: (n) => n.cordoned },
    {
      name: 'draining',
      filter: { noScheduleReason: DRAINING },
      has: (n) => n.noScheduleReasons.includes(DRAINING),
    },
    { name: 'maintenance', filter: { maintenance: 'true' }, has: (n) => n.maintenance },
    {
      name: 'quarantined',
      filter: { noScheduleReason: QUARANTINED },
      has: (n) => n.noScheduleReasons.includes(QUARANTINED),
    },
    {
      name: 'pending approval',
      filter: { provisionState: 'pending' },
      has: (n) => n.provisionState === 'pending',
    },
  ];

/**
 * A node's one state on the rack map, the first that holds, worst first: not reachable, shut out,
 * taken out of service, not taking work, waiting for approval, schedulable. Each has a glyph, so a
 * tile never says it by colour alone.
 */
export const TILE_STATES = {
  lost: '✕',
  unreachable: '?',
  offline: '○',
  decommissioned: '–',
  blocked: '⊘',
  quarantined: '◆',
  maintenance: '⚙',
  draining: '↓',
  cordoned: '‖',
  unhealthy: '!',
  pending: '…',
  schedulable: '✓',
} as const;
export type TileState = keyof typeof TILE_STATES;

export function tileState(node: Node): TileState {
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
