import type { Schemas } from '@drydock/client';
import { TAINT_PREFIX } from '../../domain/taints';
import { dash, fields, table } from '../output';

export type Node = Schemas['Node'];
export type NodeEvent = Schemas['Event'];

const yesNo = (value: boolean) => (value ? 'yes' : 'no');

/** A deleted node (listed with `--include-deleted`) shows `deleted` as its state. */
export function nodesTable(nodes: readonly Node[]): string {
  return table(
    ['ID', 'HOSTNAME', 'POOL', 'STATE', 'CORDONED', 'REASONS', 'LIVENESS', 'VERSION'],
    nodes.map((n) => [
      n.id,
      n.hostname,
      dash(n.poolId),
      n.deletedAt ? 'deleted' : n.provisionState,
      yesNo(n.cordoned),
      dash(n.noScheduleReasons.join(',')),
      n.liveness,
      String(n.version),
    ]),
  );
}

export function nodeDetails(n: Node): string {
  const labels = n.labels.map((l) => `${l.key}=${l.value}`).join(', ');
  const conditions = n.conditions
    .map((c) => `${c.type}=${c.status}${c.reason ? ` (${c.reason})` : ''} since ${c.since}`)
    .join('; ');
  return fields([
    ['ID', n.id],
    ['Hostname', n.displayName ? `${n.hostname} (${n.displayName})` : n.hostname],
    ['Tenant', dash(n.tenantId)],
    [
      'Pool',
      n.provisionState === 'pending' && n.requestedPoolId
        ? `- (asks for ${n.requestedPoolId})`
        : dash(n.poolId),
    ],
    ['Site', dash(n.siteId)],
    ['State', n.provisionState],
    ['Access', n.access],
    ['Cordoned', yesNo(n.cordoned)],
    ['Maintenance', yesNo(n.maintenance)],
    ['Reasons', dash(n.noScheduleReasons.join(', '))],
    ['Connectivity', n.connectivity],
    ['Liveness', `${n.liveness}${n.lastSeenAt ? ` (last seen ${n.lastSeenAt})` : ''}`],
    ['Booted', n.bootId ? `${n.bootedAt} (boot ${n.bootId})` : '-'],
    ['Labels', dash(labels)],
    ['Conditions', dash(conditions)],
    ...n.schedulers.map((v) => [`Scheduler ${v.source}`, schedulerLine(v)] as const),
    ['Identity gen', String(n.identityGeneration)],
    ['Version', String(n.version)],
    ['Created', n.createdAt],
    ['Updated', n.updatedAt],
    ...(n.deletedAt ? ([['Deleted', n.deletedAt]] as const) : []),
  ]);
}

/**
 * What a scheduler says of the node, on one line: `gpu-b7-01 mixed+drain (drydock: roll-out (op_…)),
 * cordoned by Drydock, seen 2026-…`, its disagreement with Drydock after it.
 */
function schedulerLine(v: Node['schedulers'][number]): string {
  const whose = v.cordoned ? (v.cordonedByDrydock ? ', cordoned by Drydock' : ', cordoned there') : '';
  const said = [
    `${v.name} ${v.state}${v.reason ? ` (${v.reason})` : ''}${whose}${v.down ? ', down' : ''}`,
    `seen ${v.observedAt}`,
    ...(v.disagreement ? [`disagrees: ${v.disagreement}`] : []),
  ];
  return said.join('; ');
}

/** A node's labels, one per line; an empty value shows as `""`. */
export function labelsTable(labels: Node['labels']): string {
  if (labels.length === 0) return 'no labels';
  return table(
    ['KEY', 'VALUE', 'SOURCE'],
    labels.map((l) => [l.key, l.value === '' ? '""' : l.value, l.source]),
  );
}

/** The operator taints of a node (its `taint:<key>` reasons), e.g. `rma-pending, dedicated=acme`. */
export function taintsOf(n: Pick<Node, 'noScheduleReasons'>): string[] {
  return n.noScheduleReasons
    .filter((r) => r.startsWith(TAINT_PREFIX))
    .map((r) => r.slice(TAINT_PREFIX.length));
}

/** `gpu-a-01 (node_…)`. */
export const nodeName = (n: Pick<Node, 'id' | 'hostname'>) => `${n.hostname} (${n.id})`;

/** What a line shows of an event; the header line puts the column names in its places. */
type EventColumns = Pick<NodeEvent, 'createdAt' | 'actor' | 'reason' | 'operationId'> & { type: string };

export const EVENT_HEADER = eventLine({
  createdAt: 'TIME',
  type: 'TYPE',
  actor: 'ACTOR',
  reason: 'REASON',
  operationId: null,
});

/** One event per line in fixed columns, so a followed stream lines up with what came before. */
export function eventLine(e: EventColumns): string {
  const reason = [e.reason, e.operationId ? `[${e.operationId}]` : null].filter(Boolean).join(' ');
  return [e.createdAt.padEnd(24), e.type.padEnd(24), e.actor.padEnd(24), reason].join('  ').trimEnd();
}
