import { nodeCheckFailures } from './acceptance';
import { DrydockError } from './errors';
import type { DrydockEvent } from './events';
import { checkLabelRequest, labelDiff, type Label } from './labels';
import {
  DRAINING,
  QUARANTINED,
  controlRefusal,
  isDraining,
  type Condition,
  type Connectivity,
  type NodeAxes,
} from './node';
import { canMove, moveTarget, provisionRules, type ProvisionMove } from './provision';
import { checkTaintRequest, taintReason } from './taints';

/** A node as a control sees it: its axes and its labels. */
export interface NodeState extends NodeAxes {
  labels: Label[];
}

/** The columns a change may set on a node. */
export interface NodePatch extends Partial<NodeAxes> {
  connectivity?: Connectivity;
  conditions?: Condition[];
  lastSeenAt?: Date;
  unreachableSince?: Date | null;
  identityGeneration?: number;
  poolId?: string;
  tenantId?: string | null;
  siteId?: string;
}

/** What a control changes on one node: the axes it sets, operator labels, and its one event. */
export interface NodeChange {
  patch: NodePatch;
  labels?: { set: Record<string, string>; removed: string[] };
  event: DrydockEvent;
}

/** A control: null when the node already is as asked (no version bump, no event). */
export type Control = (node: NodeState) => NodeChange | null;

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
/** A drain begins: cordoned and `draining`; its event names when it releases by force (if ever). */
export const startDrain = (node: NodeAxes, deadline: string | null): NodeChange => ({
  patch: {
    cordoned: true,
    noScheduleReasons: isDraining(node) ? node.noScheduleReasons : [...node.noScheduleReasons, DRAINING],
  },
  event: { type: 'node.draining', data: { deadline } },
});

export const finishDrain = (node: NodeAxes): NodeChange => ({
  patch: { noScheduleReasons: node.noScheduleReasons.filter((r) => r !== DRAINING) },
  event: { type: 'node.drained' },
});

/** Adds and removes operator taints (`taint:<key>`); controllers' reasons are never touched. */
export function taint(add: string[], remove: string[]): Control {
  checkTaintRequest(add, remove);
  return (node) => {
    const reasons = new Set(node.noScheduleReasons);
    const added = add.filter((key) => !reasons.has(taintReason(key)));
    const removed = remove.filter((key) => reasons.has(taintReason(key)));
    if (added.length === 0 && removed.length === 0) return null;
    const gone = new Set(removed.map(taintReason));
    return {
      patch: {
        noScheduleReasons: [...node.noScheduleReasons.filter((r) => !gone.has(r)), ...added.map(taintReason)],
      },
      event: { type: 'node.tainted', data: { added, removed } },
    };
  };
}

/** Sets and removes operator labels. */
export function label(set: Record<string, string>, remove: string[]): Control {
  checkLabelRequest(set, remove);
  return (node) => {
    const diff = labelDiff(node.labels, set, remove);
    if (Object.keys(diff.set).length === 0 && diff.removed.length === 0) return null;
    return { patch: {}, labels: diff, event: { type: 'node.labeled', data: diff } };
  };
}

/** The operator's way out of maintenance (only the system turns it on). */
export const clearMaintenance: Control = (node) =>
  node.maintenance ? { patch: { maintenance: false }, event: { type: 'node.maintenance.cleared' } } : null;

/** Adopt again: an adopted node goes back to `adopting` (out of placement) until acceptance passes. */
export const readopt: Control = (node) => {
  if (node.provisionState === 'adopting') return null;
  requireMove(node, 'readopt', 'adopt needs a node in adopting or adopted');
  return { patch: { provisionState: moveTarget('readopt') }, event: { type: 'node.adopting' } };
};

/** Why acceptance cannot pass yet; empty when the node may become `adopted`. */
export function acceptanceFailures(node: NodeState): string[] {
  return nodeCheckFailures(node).map((f) => f.reason);
}

/** Acceptance: an `adopting` node whose checks pass becomes `adopted`. */
export const accept: Control = (node) => {
  if (!canMove(node.provisionState, 'accept')) return null;
  const failures = acceptanceFailures(node);
  if (failures.length > 0) return null;
  return { patch: { provisionState: moveTarget('accept') }, event: { type: 'node.adopted' } };
};

/** Why the node may not be deleted now, or null; `openAllocations` counts its live allocations. */
export function deletionRefusal(node: NodeState, openAllocations: number): DrydockError | null {
  const deletable = provisionRules(node.provisionState).delete;
  if (deletable === 'no' || (deletable === 'cordoned' && !node.cordoned)) {
    const message =
      deletable === 'cordoned'
        ? 'Cordon the adopted node first, then delete it once it holds nothing'
        : `a node in ${node.provisionState} cannot be deleted`;
    return new DrydockError('INVALID_STATE', message, {
      provisionState: node.provisionState,
      cordoned: node.cordoned,
    });
  }
  if (openAllocations > 0) {
    return new DrydockError('INVALID_STATE', `the node still holds ${openAllocations} open allocation(s)`, {
      provisionState: node.provisionState,
      cordoned: node.cordoned,
      openAllocations,
    });
  }
  return null;
}

/** INVALID_STATE unless the provision state table allows `move` from the node's state. */
function requireMove(node: NodeState, move: ProvisionMove, needs: string): void {
  if (!canMove(node.provisionState, move)) {
    throw new DrydockError('INVALID_STATE', `${needs}, not ${node.provisionState}`, {
      provisionState: node.provisionState,
    });
  }
}

/** An operator lets a pending node in, into `pool`; acceptance then makes it `adopted`. */
export function approve(pool: { id: string; tenantId: string | null; siteId: string }): Control {
  return (node) => {
    requireMove(node, 'approve', 'approve needs a pending node');
    return {
      patch: {
        provisionState: moveTarget('approve'),
        poolId: pool.id,
        tenantId: pool.tenantId,
        siteId: pool.siteId,
      },
      event: { type: 'node.approved', data: { poolId: pool.id } },
    };
  };
}

export const reject: Control = (node) => {
  requireMove(node, 'reject', 'reject needs a pending node');
  return { patch: { provisionState: moveTarget('reject') }, event: { type: 'node.rejected' } };
};

export const block: Control = (node) =>
  node.access === 'blocked' ? null : { patch: { access: 'blocked' }, event: { type: 'node.blocked' } };

export const unblock: Control = (node) =>
  node.access === 'allowed' ? null : { patch: { access: 'allowed' }, event: { type: 'node.unblocked' } };

/**
 * A new identity generation: no credential or certificate of the old one is accepted again. With
 * nothing live left to revoke (it was revoked already), nothing changes and no event is written.
 */
export function revokeIdentityOf(generation: number, revoked: RevokedIdentity): Control {
  return () =>
    revoked.certificates + revoked.credentials === 0
      ? null
      : {
          patch: { identityGeneration: generation + 1 },
          event: {
            type: 'security.node.identity-revoked',
            data: { revokedCertificates: revoked.certificates, identityGeneration: generation + 1 },
          },
        };
}

/**
 * Quarantine of an identity seen on two machines: a new identity generation (its credentials were
 * revoked with reason `duplicate-identity` in the same transaction) and the NoSchedule reason
 * `quarantined`, which stays with the node: the real machine joins again as a new node.
 */
export function quarantine(
  node: NodeAxes,
  generation: number,
  seen: { sessionIds: string[]; alternations: number; revoked: RevokedIdentity },
): NodeChange {
  return {
    patch: {
      identityGeneration: generation + 1,
      noScheduleReasons: node.noScheduleReasons.includes(QUARANTINED)
        ? node.noScheduleReasons
        : [...node.noScheduleReasons, QUARANTINED],
    },
    event: {
      type: 'security.node.quarantined',
      data: {
        sessionIds: seen.sessionIds,
        alternations: seen.alternations,
        revokedCredentials: seen.revoked.credentials,
        identityGeneration: generation + 1,
      },
    },
  };
}

/** What revoking a node's identity found live: certificates and credentials. */
export interface RevokedIdentity {
  certificates: number;
  credentials: number;
}
