import { CAPACITY_BUCKETS } from '../domain/capacity';
import { TAINT_PREFIX } from '../domain/taints';
import { clock, dash, fields, table } from './output';

/** The fields of the API's node object the command line shows (docs/concepts.md). */
export interface Node {
  id: string;
  tenantId: string | null;
  poolId: string | null;
  siteId: string | null;
  hostname: string;
  displayName: string | null;
  provisionState: string;
  access: string;
  cordoned: boolean;
  maintenance: boolean;
  noScheduleReasons: string[];
  connectivity: string;
  liveness: string;
  lastSeenAt: string | null;
  labels: { key: string; value: string; source: string }[];
  conditions: { type: string; status: boolean; reason: string | null; since: string }[];
  identityGeneration: number;
  version: number;
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
}

export interface Operation {
  id: string;
  kind: string;
  nodeId: string | null;
  poolId?: string | null;
  status: 'pending' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  workflowId: string;
  actor: string;
  reason: string | null;
  idempotencyKey: string | null;
  result: Record<string, unknown> | null;
  error: Record<string, unknown> | null;
  createdAt: string;
  updatedAt: string;
  completedAt: string | null;
  /** The workflow's answer to its `progress` query while running; null when it cannot be asked. */
  progress?: unknown;
}

export interface NodeEvent {
  id: string;
  type: string;
  actor: string;
  reason: string | null;
  operationId: string | null;
  createdAt: string;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

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
    ['Pool', dash(n.poolId)],
    ['Site', dash(n.siteId)],
    ['State', n.provisionState],
    ['Access', n.access],
    ['Cordoned', yesNo(n.cordoned)],
    ['Maintenance', yesNo(n.maintenance)],
    ['Reasons', dash(n.noScheduleReasons.join(', '))],
    ['Connectivity', n.connectivity],
    ['Liveness', `${n.liveness}${n.lastSeenAt ? ` (last seen ${n.lastSeenAt})` : ''}`],
    ['Labels', dash(labels)],
    ['Conditions', dash(conditions)],
    ['Identity gen', String(n.identityGeneration)],
    ['Version', String(n.version)],
    ['Created', n.createdAt],
    ['Updated', n.updatedAt],
    ...(n.deletedAt ? ([['Deleted', n.deletedAt]] as const) : []),
  ]);
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

/** The API's pool object (GET /v1/pools/{id}). */
export interface Pool {
  id: string;
  kind: string;
  siteId: string;
  tenantId: string | null;
  grants: string[];
  policy: Record<string, unknown>;
  createdAt: string;
}

/** `GET /v1/pools/{id}/capacity`: live nodes per bucket, first match wins. */
export interface Capacity {
  poolId: string;
  total: number;
  buckets: Record<string, number>;
}

export function poolsTable(pools: readonly Pool[]): string {
  return table(
    ['ID', 'KIND', 'SITE', 'TENANT', 'GRANTS'],
    pools.map((p) => [p.id, p.kind, p.siteId, dash(p.tenantId), dash(p.grants.join(','))]),
  );
}

export function poolDetails(p: Pool): string {
  const policy = Object.entries(p.policy)
    .map(([key, value]) => `${key}=${String(value)}`)
    .join(', ');
  return fields([
    ['ID', p.id],
    ['Kind', p.kind],
    ['Site', p.siteId],
    ['Tenant', dash(p.tenantId)],
    ['Grants', dash(p.grants.join(', '))],
    ['Policy', dash(policy)],
    ['Created', p.createdAt],
  ]);
}

/** Buckets in the order they are checked (docs/concepts.md), any the API adds after, then the total. */
export function capacityTable(c: Capacity): string {
  const known: readonly string[] = CAPACITY_BUCKETS;
  const order = [...known, ...Object.keys(c.buckets).filter((b) => !known.includes(b))];
  return table(
    ['BUCKET', 'NODES'],
    [...order.map((b) => [b, String(c.buckets[b] ?? 0)]), ['total', String(c.total)]],
  );
}

/** `gpu-a-01 (node_…)`. */
export const nodeName = (n: Pick<Node, 'id' | 'hostname'>) => `${n.hostname} (${n.id})`;

export const EVENT_HEADER = eventLine({
  id: '',
  createdAt: 'TIME',
  type: 'TYPE',
  actor: 'ACTOR',
  reason: 'REASON',
  operationId: null,
});

/** One event per line in fixed columns, so a followed stream lines up with what came before. */
export function eventLine(e: NodeEvent): string {
  const reason = [e.reason, e.operationId ? `[${e.operationId}]` : null].filter(Boolean).join(' ');
  return [e.createdAt.padEnd(24), e.type.padEnd(24), e.actor.padEnd(24), reason].join('  ').trimEnd();
}

export function operationDetails(op: Operation): string {
  const pairs: [string, string][] = [
    ['ID', op.id],
    ['Kind', op.kind],
    ['Status', op.status],
    ['Node', dash(op.nodeId)],
    ...(op.poolId ? ([['Pool', op.poolId]] as [string, string][]) : []),
    ['Actor', op.actor],
    ['Reason', dash(op.reason)],
    ['Workflow', op.workflowId],
    ['Created', op.createdAt],
    ['Completed', dash(op.completedAt)],
  ];
  if (op.idempotencyKey) pairs.push(['Idem. key', op.idempotencyKey]);
  if (op.status === 'running' || op.status === 'pending')
    pairs.push(['Progress', describeProgress(op.progress)]);
  if (op.result) pairs.push(['Result', JSON.stringify(op.result)]);
  if (op.error) pairs.push(['Error', errorText(op.error)]);
  return fields(pairs);
}

/** The operation's error as a sentence: its message when it has one. */
export function errorText(error: Record<string, unknown>): string {
  const { code, message } = error;
  if (typeof message === 'string') return typeof code === 'string' ? `${code}: ${message}` : message;
  return JSON.stringify(error);
}

/**
 * A workflow's `progress` answer in a few words, e.g. `waiting for 2 allocations (first ends
 * 13:00Z); next check 12:05Z`. Kinds this does not know yet are shown by their `phase`.
 */
export function describeProgress(progress: unknown): string {
  if (progress === undefined || progress === null) return 'no progress reported yet';
  if (typeof progress !== 'object') return String(progress);
  const p = progress as Record<string, unknown>;
  const parts: string[] = [];
  const phase = typeof p.phase === 'string' ? p.phase : undefined;
  if (phase === 'waiting' && typeof p.liveAllocationCount === 'number') {
    const n = p.liveAllocationCount;
    const ends = typeof p.earliestEndsAt === 'string' ? ` (first ends ${clock(p.earliestEndsAt)})` : '';
    parts.push(`waiting for ${n} allocation${n === 1 ? '' : 's'}${ends}`);
  } else if (phase) {
    parts.push(typeof p.step === 'string' ? `${phase}: ${p.step}` : phase);
  }
  if (Array.isArray(p.stepsDone) && p.stepsDone.length > 0) {
    parts.push(`${p.stepsDone.length} step${p.stepsDone.length === 1 ? '' : 's'} done`);
  }
  if (typeof p.attempt === 'number' && typeof p.action === 'string' && p.attempt > 0) {
    parts.push(`attempt ${p.attempt}: ${p.action}`);
  }
  if (typeof p.attemptDeadline === 'string') parts.push(`until ${clock(p.attemptDeadline)}`);
  if (typeof p.nextCheckAt === 'string') parts.push(`next check ${clock(p.nextCheckAt)}`);
  if (typeof p.deadline === 'string') parts.push(`deadline ${clock(p.deadline)}`);
  return parts.length > 0 ? parts.join('; ') : JSON.stringify(progress);
}

/** The API's join token (docs/lifecycle/enrollment.md); `secret` only in the answer to its creation. */
export interface JoinToken {
  id: string;
  poolId: string;
  tenantId: string | null;
  labels: Record<string, string>;
  description: string | null;
  maxUses: number;
  uses: number;
  usesLeft: number | null;
  expiresAt: string | null;
  createdBy: string;
  createdAt: string;
  revokedAt: string | null;
  secret?: string;
}

/** `2/5`, or `2/∞` when uses are unlimited (`maxUses` 0). */
export const tokenUses = (t: Pick<JoinToken, 'uses' | 'maxUses'>) =>
  `${t.uses}/${t.maxUses === 0 ? '∞' : t.maxUses}`;

/** The expiry, `never`, or the expiry marked `(expired)` once it has passed. */
export function tokenExpiry(t: Pick<JoinToken, 'expiresAt'>, now: Date = new Date()): string {
  if (!t.expiresAt) return 'never';
  return Date.parse(t.expiresAt) <= now.getTime() ? `${t.expiresAt} (expired)` : t.expiresAt;
}

export function tokensTable(tokens: readonly JoinToken[], now: Date = new Date()): string {
  return table(
    ['ID', 'POOL', 'TENANT', 'USES', 'EXPIRES', 'REVOKED', 'DESCRIPTION'],
    tokens.map((t) => [
      t.id,
      t.poolId,
      dash(t.tenantId),
      tokenUses(t),
      tokenExpiry(t, now),
      dash(t.revokedAt),
      dash(t.description),
    ]),
  );
}

/** A token's fields; with its secret (only on creation), and the warning that it is shown once. */
export function tokenDetails(t: JoinToken, now: Date = new Date()): string {
  const labels = Object.entries(t.labels)
    .map(([key, value]) => `${key}=${value}`)
    .join(', ');
  const details = fields([
    ['ID', t.id],
    ['Pool', t.poolId],
    ['Tenant', dash(t.tenantId)],
    ['Expires', tokenExpiry(t, now)],
    ['Uses', tokenUses(t)],
    ['Labels', dash(labels)],
    ['Description', dash(t.description)],
    ...(t.revokedAt ? ([['Revoked', t.revokedAt]] as const) : []),
    ...(t.secret ? ([['Secret', t.secret]] as const) : []),
  ]);
  if (!t.secret) return details;
  return `${details}\n\nThe secret is shown only this once: store it now (token list never shows it).`;
}

/** An API key as `/v1/keys` shows it; `secret` only when it was just made. */
export interface ApiKey {
  id: string;
  name: string;
  tenantId: string | null;
  actions: string[];
  createdAt: string;
  revokedAt: string | null;
  secret?: string;
  /** On a rotation: the key it replaces, accepted until its `revokedAt`. */
  previous?: ApiKey;
}

/** `operator`, or the tenant a tenant key is bound to. */
const keyRole = (k: ApiKey) => (k.tenantId ? `tenant ${k.tenantId}` : 'operator');

/** When a key stops being accepted: `-` (it does not), or a time, marked once it has passed. */
function keyRevoked(k: Pick<ApiKey, 'revokedAt'>, now: Date): string {
  if (!k.revokedAt) return '-';
  return Date.parse(k.revokedAt) > now.getTime() ? `${k.revokedAt} (grace)` : k.revokedAt;
}

export function keysTable(keys: readonly ApiKey[], now: Date = new Date()): string {
  return table(
    ['ID', 'NAME', 'ROLE', 'ACTIONS', 'CREATED', 'REVOKED'],
    keys.map((k) => [
      k.id,
      k.name,
      keyRole(k),
      k.tenantId ? k.actions.join(',') : 'all',
      k.createdAt,
      keyRevoked(k, now),
    ]),
  );
}

/** A key's fields; with its secret (on creation and rotation), and the key a rotation replaces. */
export function keyDetails(k: ApiKey, now: Date = new Date()): string {
  const details = fields([
    ['ID', k.id],
    ['Name', k.name],
    ['Role', keyRole(k)],
    ['Actions', k.tenantId ? k.actions.join(', ') : 'all'],
    ['Created', k.createdAt],
    ...(k.revokedAt ? ([['Revoked', keyRevoked(k, now)]] as const) : []),
    ...(k.previous
      ? ([['Replaces', `${k.previous.id}, accepted until ${k.previous.revokedAt ?? '-'}`]] as const)
      : []),
    ...(k.secret ? ([['Secret', k.secret]] as const) : []),
  ]);
  if (!k.secret) return details;
  return `${details}\n\nThe secret is shown only this once: store it now (keys list never shows it).`;
}

/** `POST /v1/nodes/{id}/decommission/preview` (docs/lifecycle/decommission.md). */
export interface DecommissionPreview {
  nodeId: string;
  hostname: string;
  displayName: string | null;
  confirmationIdentities: string[];
  nodeGeneration: number;
  dependencyDigest: string;
  ready: boolean;
  blockers: { kind: string; id: string; message: string }[];
  cleanup: { kind: string; count: number }[];
  retained: { kind: string; count: number }[];
}

/** An identity as the operator must type it: quoted when it holds a space or a comma. */
const typed = (identity: string) => (/[\s,"]/.test(identity) ? JSON.stringify(identity) : identity);

/** The preview: what to type, what to present, what blocks, what goes and what stays. */
export function previewDetails(p: DecommissionPreview): string {
  const n = p.blockers.length;
  const head = fields([
    [
      'Node',
      `${nodeName({ id: p.nodeId, hostname: p.hostname })}${p.displayName ? ` ${typed(p.displayName)}` : ''}`,
    ],
    ['Confirm as', p.confirmationIdentities.map(typed).join(', ')],
    ['Generation', String(p.nodeGeneration)],
    ['Digest', p.dependencyDigest],
    ['Ready', p.ready ? 'yes' : `no: ${n} blocker${n === 1 ? '' : 's'}`],
  ]);
  const sections = [head];
  if (n > 0) sections.push(blockersTable(p.blockers));
  sections.push(
    table(
      ['CLEANUP', 'COUNT'],
      p.cleanup.map((c) => [c.kind, String(c.count)]),
    ),
    table(
      ['RETAINED', 'COUNT'],
      p.retained.map((r) => [r.kind, String(r.count)]),
    ),
  );
  return sections.join('\n\n');
}

/** The blockers an INVALID_STATE refusal lists in its details, one per line. */
export function blockersTable(blockers: DecommissionPreview['blockers']): string {
  return table(
    ['BLOCKER', 'ID', 'MESSAGE'],
    blockers.map((b) => [b.kind, b.id, b.message]),
  );
}
