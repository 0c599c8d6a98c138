import { createHash } from 'node:crypto';
import type { Liveness, ProvisionState } from './node';
import { canMove } from './provision';

/** Everything a decommission decision depends on, as read in one transaction. */
export interface DecommissionDependencies {
  node: {
    id: string;
    hostname: string;
    displayName: string | null;
    version: number;
    provisionState: ProvisionState;
    liveness: Liveness;
    access: string;
    cordoned: boolean;
    deleted: boolean;
    identityGeneration: number;
  };
  openAllocations: { id: string; kind: string; endsAt: string | null }[];
  /** Every live copy recorded on the node: recording or removing one changes the digest. */
  artifactCopies: { id: string; artifactId: string; path: string }[];
  /**
   * The node's copies of artifacts no other node holds a copy of that counts (not removed, on a
   * node that is not deleted or leaving: domain/artifacts.ts `COPYLESS_STATES`): each a blocker.
   */
  soleArtifactCopies: { id: string; artifactId: string; path: string }[];
  runningOperations: { id: string; kind: string }[];
  credentials: string[];
  certificates: string[];
  accelerators: { id: string; state: string }[];
  storageRoots: { id: string; state: string }[];
  current: { scheduler: number; telemetry: number; inventory: number };
}

export interface Blocker {
  kind: 'allocation' | 'artifact' | 'operation' | 'liveness' | 'state';
  id: string;
  message: string;
}

/** Liveness that shows the agent is stopped, which a decommission requires. */
const STOPPED: Liveness[] = ['offline', 'unreachable', 'lost'];

/** What stands in the way of decommissioning, each with its kind and id. */
export function decommissionBlockers(deps: DecommissionDependencies): Blocker[] {
  const { node } = deps;
  const blockers: Blocker[] = [];
  if (node.deleted) blockers.push({ kind: 'state', id: node.id, message: 'the node is deleted' });
  if (!canMove(node.provisionState, 'decommission')) {
    blockers.push({ kind: 'state', id: node.id, message: `the node is ${node.provisionState}` });
  }
  if (!STOPPED.includes(node.liveness) && node.liveness !== 'decommissioned') {
    blockers.push({
      kind: 'liveness',
      id: node.id,
      message: `liveness is ${node.liveness}: stop the agent first (offline, unreachable or lost)`,
    });
  }
  for (const a of deps.openAllocations) {
    blockers.push({
      kind: 'allocation',
      id: a.id,
      message: a.endsAt ? `live ${a.kind} until ${a.endsAt}` : `live ${a.kind} with no end`,
    });
  }
  for (const c of deps.soleArtifactCopies) {
    blockers.push({
      kind: 'artifact',
      id: c.artifactId,
      message: `the only copy of ${c.artifactId} is at ${c.path}`,
    });
  }
  for (const op of deps.runningOperations) {
    blockers.push({ kind: 'operation', id: op.id, message: `a ${op.kind} operation is running` });
  }
  return blockers;
}

/** The exact strings an operator may type to confirm: the id, the hostname, the display name. */
export function confirmationIdentities(node: DecommissionDependencies['node']): string[] {
  return [...new Set([node.id, node.hostname, ...(node.displayName ? [node.displayName] : [])])];
}

/**
 * SHA-256 over a canonical, sorted encoding of everything the decision depends on: any change to
 * a dependency (an allocation, a credential, an accelerator, a state axis…) changes the digest.
 */
export function dependencyDigest(deps: DecommissionDependencies): string {
  return `sha256:${createHash('sha256').update(canonical(deps)).digest('hex')}`;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) {
    return `[${value.map(canonical).sort().join(',')}]`;
  }
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    );
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}
