import type { Schemas } from '@drydock/client';
import { isDraining } from '../domain/node';

type Node = Schemas['Node'];

/** A node's GPUs as its inventory labels say them: `H100 × 8`; empty when it has none. */
export function gpuOf(node: Node): string {
  const label = (key: string) => node.labels.find((l) => l.key === key)?.value;
  const model = label('gpu.model');
  const count = label('gpu.count');
  if (!model) return '';
  return count ? `${model} × ${count}` : model;
}

/** The node list's sort keys, each the value a node is ordered by. */
export const NODE_SORTS = {
  hostname: (n: Node) => n.hostname,
  pool: (n: Node) => n.poolId ?? '',
  state: (n: Node) => n.provisionState,
  access: (n: Node) => n.access,
  cordoned: (n: Node) => String(n.cordoned),
  draining: (n: Node) => String(isDraining(n)),
  maintenance: (n: Node) => String(n.maintenance),
  liveness: (n: Node) => n.liveness,
  gpu: gpuOf,
  lastSeen: (n: Node) => n.lastSeenAt ?? '',
} as const;
export type SortKey = keyof typeof NODE_SORTS;

export interface NodeSort {
  key: SortKey;
  descending: boolean;
}

/** The default order: by hostname. */
export const BY_HOSTNAME: NodeSort = { key: 'hostname', descending: false };

/** The page's `sort` (`hostname`, or `-lastSeen` for descending), or why it is refused. */
export function sortOf(sort: string | undefined): NodeSort | { problem: string } {
  if (!sort) return BY_HOSTNAME;
  const descending = sort.startsWith('-');
  const key = descending ? sort.slice(1) : sort;
  if (!Object.hasOwn(NODE_SORTS, key)) {
    return {
      problem: `sort must be one of ${Object.keys(NODE_SORTS).join(', ')}, with a leading - for descending order.`,
    };
  }
  return { key: key as SortKey, descending };
}

/** The page's `sort` value for an order. */
export function sortParam(sort: NodeSort): string {
  return `${sort.descending ? '-' : ''}${sort.key}`;
}

/** Names in the order people read them: `gpu-2` before `gpu-10`. */
export const compare = new Intl.Collator('en', { numeric: true }).compare;

/** The nodes in that order; ties by hostname, then id (stable from page to page). */
export function sortNodes(nodes: Node[], sort: NodeSort): Node[] {
  const valueOf = NODE_SORTS[sort.key];
  const sign = sort.descending ? -1 : 1;
  return [...nodes].sort(
    (a, b) =>
      sign * compare(valueOf(a), valueOf(b)) || compare(a.hostname, b.hostname) || compare(a.id, b.id),
  );
}
