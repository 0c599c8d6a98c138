import { inArray } from 'drizzle-orm';
import { EVENT_DESCRIPTIONS, type EventType } from '../../domain/events';
import type { Person, Principal } from '../../domain/principal';
import type { Db } from '../../db/client';
import { identitiesOf } from '../../db/people';
import { listEventsNewestFirst, type EventFilters } from '../../db/queries/event-feed';
import { eventView, type EventRow } from '../../db/queries/events';
import { nodes } from '../../db/schema';
import type { AppDeps } from '../env';
import { readEventFeed } from './event-feed';

/**
 * The actor an audit filter names: an actor string as events carry it (`key:ops`, `node:n_…`,
 * `system:drain`, `user:alice@example.com`), or, without a colon, a person: `alice@example.com`
 * is `user:alice@example.com`.
 */
export function auditActor(actor: string): string {
  return actor.includes(':') ? actor : `user:${actor}`;
}

/**
 * One audit entry: the event, its one-line description, the node's hostname and pool as they are
 * now, and for a person's event the provider identity behind its actor.
 */
export function auditEntryView(
  e: EventRow,
  node: { hostname: string; poolId: string | null } | undefined,
  person: Person | null,
) {
  const dataPool = typeof e.data.poolId === 'string' ? e.data.poolId : null;
  return {
    ...eventView(e),
    description: EVENT_DESCRIPTIONS[e.type as EventType] ?? null,
    hostname: node?.hostname ?? null,
    poolId: dataPool ?? node?.poolId ?? null,
    person,
  };
}
export type AuditEntry = ReturnType<typeof auditEntryView>;

export type AuditQuery = EventFilters & {
  typePrefixes?: string[];
  limit: number;
} & (
    | { direction: 'newest'; beforeId?: number }
    | { direction: 'follow'; afterId: number; waitMs: number; signal: AbortSignal }
  );

/**
 * A page of the audit, a view of the events table: newest first, going back from `beforeId`
 * (`nextCursor` null on the last page); or following, oldest first after `afterId` with the
 * event feed's long-poll and horizon (`nextCursor` never null).
 */
export async function readAudit(
  deps: Pick<AppDeps, 'db' | 'feedWakeups'>,
  principal: Principal,
  q: AuditQuery,
): Promise<{ items: AuditEntry[]; nextCursor: string | null }> {
  let rows: EventRow[];
  let nextCursor: string | null;
  if (q.direction === 'follow') {
    const page = await readEventFeed(deps, principal, q);
    rows = page.items;
    nextCursor = String(page.nextCursor);
  } else {
    rows = await listEventsNewestFirst(deps.db, principal, q);
    const last = rows[rows.length - 1];
    nextCursor = rows.length === q.limit && last ? String(last.id) : null;
  }
  const nodeIds = [...new Set(rows.flatMap((e) => (e.nodeId ? [e.nodeId] : [])))];
  const found =
    nodeIds.length === 0
      ? []
      : await deps.db
          .select({ id: nodes.id, hostname: nodes.hostname, poolId: nodes.poolId })
          .from(nodes)
          .where(inArray(nodes.id, nodeIds));
  const byId = new Map(found.map((n) => [n.id, n]));
  const personOf = await peopleBehind(deps.db, rows);
  return {
    items: rows.map((e) => auditEntryView(e, e.nodeId ? byId.get(e.nodeId) : undefined, personOf(e))),
    nextCursor,
  };
}

/**
 * Who each person's event was by: of the identities that acted as its actor, the one seen first
 * most recently before the event (an email the provider gave a new person since names the new one
 * only from their first request on). Null for keys, nodes and the system.
 */
async function peopleBehind(db: Db, rows: EventRow[]): Promise<(e: EventRow) => Person | null> {
  const actors = [...new Set(rows.flatMap((e) => (e.actor.startsWith('user:') ? [e.actor] : [])))];
  const identities = await identitiesOf(db, actors);
  return (e) => {
    const mine = identities.filter((p) => p.actor === e.actor);
    const at = mine.find((p) => p.firstSeenAt <= e.createdAt) ?? mine[mine.length - 1];
    return at ? { issuer: at.issuer, subject: at.subject, email: at.email } : null;
  };
}
