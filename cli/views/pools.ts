import type { Answer, Schemas } from '@drydock/client';
import { CAPACITY_BUCKETS } from '../../domain/capacity';
import { dash, fields, table } from '../output';
import { progressInWords } from '../../domain/progress';
import type { Operation } from './operations';

export type Pool = Schemas['Pool'];
/** `GET /v1/pools/{id}/capacity`: live nodes per bucket, first match wins. */
export type Capacity = Answer<'get', '/v1/pools/{id}/capacity'>;

export function poolsTable(pools: readonly Pool[]): string {
  return table(
    ['ID', 'KIND', 'SITE', 'TENANT', 'GRANTS'],
    pools.map((p) => [p.id, p.kind, p.siteId, dash(p.tenantId), dash(p.grants.join(','))]),
  );
}

export function poolDetails(p: Pool): string {
  // policy.remediation is an object per condition type: shown as its JSON.
  const policy = Object.entries(p.policy)
    .map(([key, value]) => `${key}=${typeof value === 'object' ? JSON.stringify(value) : String(value)}`)
    .join(', ');
  return fields([
    ['ID', p.id],
    ['Kind', p.kind],
    ['Site', p.siteId],
    ['Tenant', dash(p.tenantId)],
    ['Grants', dash(p.grants.join(', '))],
    ['Policy', dash(policy)],
    ['Version', String(p.version)],
    ['Created', p.createdAt],
    ['Updated', p.updatedAt],
  ]);
}

/** Buckets in the order they are checked (docs/concepts.md), any the API adds after, then the total. */
export function capacityTable(c: Capacity): string {
  const known: readonly string[] = CAPACITY_BUCKETS;
  const buckets: Record<string, number | undefined> = c.buckets;
  const order = [...known, ...Object.keys(buckets).filter((b) => !known.includes(b))];
  return table(
    ['BUCKET', 'NODES'],
    [...order.map((b) => [b, String(buckets[b] ?? 0)]), ['total', String(c.total)]],
  );
}

/** A finished pool drain: how many nodes ended how, and each node that did not drain and why. */
export function poolDrainSummary(op: Operation): string {
  const result = op.result ?? {};
  const failed = (Array.isArray(result.failed) ? result.failed : []) as {
    nodeId: string;
    code: string;
    message: string;
  }[];
  const lines = [`${op.poolId}: ${progressInWords(op.progress)}`];
  if (failed.length > 0) {
    lines.push(
      table(
        ['NODE', 'CODE', 'WHY'],
        failed.map((f) => [f.nodeId, f.code, f.message]),
      ),
    );
  }
  return lines.join('\n');
}
