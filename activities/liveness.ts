import { eq, inArray, sql } from 'drizzle-orm';
import { parseDuration } from '../domain/duration';
import { livenessStep, NODE_UNREACHABLE, type LivenessSettings } from '../domain/liveness';
import type { Db, Tx } from '../db/client';
import { settleAcceptances } from '../db/acceptance';
import { recordCapacity } from '../db/capacity-history';
import { DEFAULT_CAPACITY_HISTORY_DAYS } from '../domain/capacity';
import { expireOverdueCommands } from '../db/commands';
import { applyLivenessChanges, withoutUnreachable, type LivenessChange } from '../db/liveness';
import type { NodeRow } from '../db/queries/nodes';
import { controllerState, nodeCertificates, nodes, pools } from '../db/schema';
import type { WorkerMetrics } from '../observability/metrics';

export interface SweepResult {
  disconnected: number;
  unreachable: number;
  lost: number;
  graceUntil: string | null;
  durationMs: number;
}

/** The event of a session the sweep closed (no heartbeat within the session timeout). */
const NO_SESSION = { type: 'node.disconnected', data: { reason: 'no-session' } } as const;

const LAST_SWEEP = 'liveness.last-sweep';
const GRACE_UNTIL = 'liveness.grace-until';

/** Lost applies only to these pool kinds, and only when the pool sets `policy.lostAfter`. */
const LOSABLE_POOL_KINDS = ['provider', 'vps-host'];

export function createLivenessActivities(
  db: Db,
  metrics?: WorkerMetrics,
  capacityHistoryDays = DEFAULT_CAPACITY_HISTORY_DAYS,
) {
  /** The minute (epoch minutes) this process last recorded the pools' capacity in. */
  let recordedMinute = 0;
  return {
    /**
     * One liveness sweep, one transaction: session timeouts (`node.disconnected`), the lease
     * (`node.unreachable`), `lostAfter` (`node.lost`). After a gap in sweeps longer than the outage
     * threshold (controller or database down) ages do not count for the grace period. Releases nothing.
     */
    async sweepLiveness(settings: LivenessSettings): Promise<SweepResult> {
      const started = Date.now();
      const swept = await db.transaction(async (tx) => {
        const now = new Date();
        // Commands no agent took before their expiresAt end here (docs/lifecycle/commands.md).
        await expireOverdueCommands(tx);
        // Acceptance commands that expired or were withdrawn fail their node's acceptance.
        await settleAcceptances(tx);
        const graceUntil = await updateGrace(tx, now, settings);
        const result: SweepResult = {
          disconnected: 0,
          unreachable: 0,
          lost: 0,
          graceUntil: graceUntil?.toISOString() ?? null,
          durationMs: 0,
        };
        if (graceUntil && graceUntil > now) return { ...result, durationMs: Date.now() - started };

        const cutoff = new Date(now.getTime() - Math.min(settings.leaseMs, settings.sessionTimeoutMs));
        // Candidates only, locked and read whole in one statement: nodes that may have aged out, or
        // unreachable nodes of pools that lose them.
        const candidates = await tx
          .select({
            node: nodes,
            seenAt: sql<string | null>`coalesce(${nodes.lastSeenAt},
              (select max(c.issued_at) from ${nodeCertificates} c where c.node_id = ${nodes.id}))`,
            lostAfter: sql<string | null>`case when ${pools.kind} in (${sql.join(
              LOSABLE_POOL_KINDS.map((k) => sql`${k}`),
              sql`, `,
            )}) then ${pools.policy}->>'lostAfter' end`,
          })
          .from(nodes)
          .leftJoin(pools, eq(pools.id, nodes.poolId))
          .where(
            sql`${nodes.deletedAt} is null
              and ${nodes.provisionState} not in ('decommissioned', 'rejected')
              and (
                (${nodes.liveness} in ('alive', 'unreachable') and ${nodes.lastSeenAt} < ${cutoff.toISOString()}::timestamptz)
                or (${nodes.liveness} = 'alive' and ${nodes.lastSeenAt} is null)
                or (${nodes.liveness} = 'unreachable' and ${pools.kind} in ('provider', 'vps-host') and ${pools.policy} ? 'lostAfter')
              )`,
          )
          .for('update', { of: nodes, skipLocked: true });
        const due: { node: NodeRow; step: 'disconnect' | 'unreachable' | 'lost' }[] = [];
        for (const { node, seenAt, lostAfter } of candidates) {
          if (!seenAt) continue;
          const lostAfterMs = lostAfter ? parseDuration(lostAfter) : null;
          const step = livenessStep(
            {
              liveness: node.liveness,
              connectivity: node.connectivity,
              seenAt: new Date(seenAt),
              unreachableSince: node.unreachableSince,
              lostAfterMs,
            },
            now,
            settings,
          );
          if (step) due.push({ node, step });
        }
        if (due.length === 0) return { ...result, durationMs: Date.now() - started };
        // One update and one insert for all of them: a mass event (a rack's switch, a region) must
        // not cost two round trips per node inside the sweep's transaction.
        const changes: LivenessChange[] = [];
        for (const { node, step } of due) {
          if (step === 'unreachable') {
            const reasons = node.noScheduleReasons.includes('unreachable')
              ? node.noScheduleReasons
              : [...node.noScheduleReasons, 'unreachable'];
            changes.push({
              node,
              patch: {
                liveness: 'unreachable',
                connectivity: 'disconnected',
                unreachableSince: now,
                noScheduleReasons: reasons,
                conditions: [
                  ...withoutUnreachable(node.conditions),
                  {
                    type: NODE_UNREACHABLE,
                    status: true,
                    reason: 'HeartbeatTimeout',
                    since: now.toISOString(),
                  },
                ],
              },
              // A sweep that finds a connected node already past its lease (sweeps spaced out by
              // load, or a lease shorter than the session timeout) closes the session as well.
              events: [
                ...(node.connectivity === 'connected' ? [NO_SESSION] : []),
                {
                  type: 'node.unreachable',
                  data: { lastSeenAt: node.lastSeenAt?.toISOString() ?? null },
                },
              ],
            });
            result.unreachable++;
            if (node.connectivity === 'connected') result.disconnected++;
          } else if (step === 'disconnect') {
            changes.push({
              node,
              patch: { connectivity: 'disconnected' },
              events: [NO_SESSION],
            });
            result.disconnected++;
          } else {
            changes.push({ node, patch: { liveness: 'lost' }, events: [{ type: 'node.lost' }] });
            result.lost++;
          }
        }
        await applyLivenessChanges(tx, changes, 'system:liveness');
        return { ...result, durationMs: Date.now() - started };
      });
      metrics?.sweep(swept, (Date.now() - started) / 1_000);
      // Capacity over time: the first sweep of a minute records every pool's capacity after its
      // changes (once per minute across workers: the table keeps the minute's first).
      const now = new Date();
      const minute = Math.floor(now.getTime() / 60_000);
      if (minute !== recordedMinute) {
        await recordCapacity(db, now, capacityHistoryDays);
        recordedMinute = minute;
      }
      return swept;
    },
  };
}

/** Records this sweep; returns the end of the grace period in force, if any. */
async function updateGrace(tx: Tx, now: Date, settings: LivenessSettings): Promise<Date | null> {
  const rows = await tx
    .select()
    .from(controllerState)
    .where(inArray(controllerState.key, [LAST_SWEEP, GRACE_UNTIL]))
    .for('update');
  const last = rows.find((r) => r.key === LAST_SWEEP)?.at ?? null;
  let graceUntil = rows.find((r) => r.key === GRACE_UNTIL)?.at ?? null;
  if (last && now.getTime() - last.getTime() > settings.outageMs) {
    graceUntil = new Date(now.getTime() + settings.graceMs);
    await upsert(tx, GRACE_UNTIL, graceUntil);
  }
  await upsert(tx, LAST_SWEEP, now);
  return graceUntil;
}

async function upsert(tx: Tx, key: string, at: Date): Promise<void> {
  await tx
    .insert(controllerState)
    .values({ key, at })
    .onConflictDoUpdate({ target: controllerState.key, set: { at } });
}
