import type { NodeEvent } from './nodes';

type FleetColumns = Pick<NodeEvent, 'createdAt' | 'actor' | 'reason' | 'operationId'> & {
  nodeId: string | null;
  type: string;
};

/** One fleet event per line in fixed columns: time, node, type, actor, reason. */
export function fleetEventLine(e: FleetColumns): string {
  const reason = [e.reason, e.operationId ? `[${e.operationId}]` : null].filter(Boolean).join(' ');
  return [e.createdAt.padEnd(24), (e.nodeId ?? '-').padEnd(31), e.type.padEnd(24), e.actor.padEnd(24), reason]
    .join('  ')
    .trimEnd();
}

export const FLEET_EVENT_HEADER = fleetEventLine({
  createdAt: 'TIME',
  nodeId: 'NODE',
  type: 'TYPE',
  actor: 'ACTOR',
  reason: 'REASON',
  operationId: null,
});
