import { LABEL_KEY } from './labels';

/**
 * The orders `GET /v1/nodes?sort=` lists nodes in besides its default (by id): a field of the
 * node, or `label:KEY` (the node's value of that label; none sorts first), `-` before it for
 * descending; ties broken by id. Names sort as people read them (`gpu-2` before `gpu-10`); a node
 * never seen sorts before every time.
 */
export const NODE_SORT_KEYS = [
  'hostname',
  'poolId',
  'provisionState',
  'access',
  'cordoned',
  'maintenance',
  'liveness',
  'lastSeenAt',
] as const;
export type NodeSortKey = (typeof NODE_SORT_KEYS)[number] | `label:${string}`;

export interface NodeOrder {
  key: NodeSortKey;
  descending: boolean;
}

/** What `sort` takes: a key, or `label:` and a label key, with an optional leading `-`. */
export const NODE_SORT = new RegExp(
  `^-?(${NODE_SORT_KEYS.join('|')}|label:${LABEL_KEY.source.slice(1, -1)})$`,
);

/** The order a `sort` value names (one `NODE_SORT` accepts). */
export function nodeOrderOf(sort: string): NodeOrder {
  const descending = sort.startsWith('-');
  return { key: (descending ? sort.slice(1) : sort) as NodeSortKey, descending };
}
