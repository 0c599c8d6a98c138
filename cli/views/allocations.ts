import type { Schemas } from '@drydock/client';
import { dash, table } from '../output';

export type Allocation = Schemas['Allocation'];

/** live: holds its node; released: released by someone; ended: past its endsAt. */
export function allocationState(a: Allocation): string {
  if (a.live) return 'live';
  return a.releasedAt ? 'released' : 'ended';
}

export function allocationsTable(allocations: readonly Allocation[]): string {
  return table(
    ['ID', 'NODE', 'TENANT', 'KIND', 'ENDS', 'STATE'],
    allocations.map((a) => [a.id, a.nodeId, a.tenantId, a.kind, dash(a.endsAt), allocationState(a)]),
  );
}
