import { DRAINING, controlRefusal, isDraining, type NodeAxes } from './node';
import { DrydockError } from './errors';

/** What a control changes on one node: the axes it sets and the one event it appends. */
export interface NodeChange {
  patch: Partial<Pick<NodeAxes, 'cordoned' | 'noScheduleReasons' | 'maintenance' | 'access'>>;
  event: { type: string; data?: Record<string, unknown> };
}

/** A control: null when the node already is as asked (no version bump, no event). */
export type Control = (node: NodeAxes) => NodeChange | null;

/** Refuses any control on a deleted or decommissioned node. */
export function assertControllable(node: Pick<NodeAxes, 'provisionState' | 'deletedAt'>): void {
  const refusal = controlRefusal(node);
  if (refusal) {
    throw new DrydockError('INVALID_STATE', `${refusal}; no control applies`, {
      provisionState: node.provisionState,
      deleted: node.deletedAt !== null,
    });
  }
}

export const cordon: Control = (node) =>
  node.cordoned ? null : { patch: { cordoned: true }, event: { type: 'node.cordoned' } };

/** Uncordon also ends a drain: the drain workflow sees `draining` gone and cancels its operation. */
export const uncordon: Control = (node) => {
  if (!node.cordoned && !isDraining(node)) return null;
  return {
    patch: { cordoned: false, noScheduleReasons: node.noScheduleReasons.filter((r) => r !== DRAINING) },
    event: { type: 'node.uncordoned', data: { endedDrain: isDraining(node) } },
  };
};

/** The drain fence: cordon and the `draining` reason. */
export const startDrain: Control = (node) => ({
  patch: {
    cordoned: true,
    noScheduleReasons: isDraining(node) ? node.noScheduleReasons : [...node.noScheduleReasons, DRAINING],
  },
  event: { type: 'node.draining' },
});

export const finishDrain: Control = (node) => ({
  patch: { noScheduleReasons: node.noScheduleReasons.filter((r) => r !== DRAINING) },
  event: { type: 'node.drained' },
});
