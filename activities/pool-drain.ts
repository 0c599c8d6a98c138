import { and, asc, count, eq, inArray, isNull, or, sql } from 'drizzle-orm';
import { budgetMax } from '../domain/budget';
import { deadlineOf } from '../domain/deadline';
import { DrydockError } from '../domain/errors';
import { isDraining } from '../domain/node';
import { isFinished } from '../domain/operation';
import type { PoolDrainNodeTimeline } from '../domain/pool-drain-timeline';
import {
  DRAIN_MAX_SLEEP_MS,
  POOL_DRAIN_LISTED,
  poolDrainDeadline,
  type FailedNode,
  type PoolDrainBudget,
  type PoolDrainProgress,
  type PoolDrainWaitingFor,
} from '../domain/progress';
import { derivedUlid } from '../domain/ulid';
import type { Db, DbOrTx } from '../db/client';
import { classifyDatabaseError } from '../db/errors';
import { finishOperation, recordProgress, type OperationRow } from '../db/operations';
import { isoOrNull } from '../db/queries/dates';
import { progressOf } from '../db/queries/operations';
import { requestDrain } from '../db/requests/drain';
import type { PoolDrainRecord } from '../db/requests/pool-drain';
import { disruptions, nodes, operations, pools } from '../db/schema';
import { POOL_DRAIN_WAVE } from '../workflows/definitions';
import { beginOperationRun } from './begin';
import { timelineOf, type DrainSeen } from './pool-drain-timeline';

/** What a pool drain's record keeps beside its request: the drains it joined, the nodes refused. */
interface PoolDrainResult extends PoolDrainRecord {
  /** Drains that ran (or had drained the node) when the pool drain reached the node. */
  joined?: string[];
  /** Nodes whose drain request was refused (deleted or decommissioned since the selection). */
  refused?: FailedNode[];
}

/** Where a pool drain's nodes stand, read from the records of their drains. */
interface PoolDrainState {
  pending: string[];
  draining: string[];
  waitingForBudget: string[];
  drained: string[];
  failed: FailedNode[];
  /** What the records of the nodes' drains say, by node id (a node reached by none: absent). */
  seen: Map<string, DrainSeen>;
}

/** Node drains requested in one transaction of a wave (its nodes and the record locked until it commits). */
const SHARE = 25;

/**
 * How long a pool drain waits without a wake-up before it looks again anyway. Every change of where
 * its nodes stand wakes it through the outbox: a node drain that ends (one it requested or one it
 * joined), or that starts or stops waiting for the pool's disruption budget. What this look is for:
 * who holds the budget can change while none of its nodes does (a node outside it drained, or
 * uncordoned and its slot taken by another drain), which its progress names anew at the next look;
 * and it is the safety net every workflow keeps for a wake-up that comes late (docs/architecture.md,
 * rule 4). As long as a node drain's: no poll (12 looks an hour at most, not 360).
 */
const LOOK_AGAIN_AFTER_MS = DRAIN_MAX_SLEEP_MS;

export function createPoolDrainActivities(db: Db) {
  return {
    /**
     * One look at a pool drain, in one transaction with its record locked: where each selected node
     * stands (from its drain's record) and, while some wait for the pool's disruption budget, who
     * holds it, written on the operation; when every node drained or failed, the pool drain ends
     * (`succeeded` when all drained, else `failed` naming them). `startable`: how many node drains
     * it may request now (`maxConcurrent` less those running). The first look begins the operation
     * (`beginOperationRun`).
     */
    async lookAtPoolDrain(input: {
      operationId: string;
    }): Promise<{ progress: PoolDrainProgress; startable: number }> {
      return db.transaction(async (tx) => {
        await tx.select().from(operations).where(eq(operations.id, input.operationId)).for('update');
        const op = await beginOperationRun(tx, input.operationId, 'draining');
        if (op.status !== 'running') return { progress: progressOf(op) as PoolDrainProgress, startable: 0 };
        const record = op.result as unknown as PoolDrainResult;
        const state = await stateOf(tx, op);
        const budget =
          state.waitingForBudget.length > 0 && op.poolId
            ? await budgetOf(tx, op.poolId, state.waitingForBudget)
            : null;
        const timeline = await timelineOf(tx, op, record.nodeIds, state.seen);
        const waitingFor = waitingForOf(record, state, budget, timeline);
        if (state.pending.length === 0 && state.draining.length + state.waitingForBudget.length === 0) {
          const result = { ...record, counts: waitingFor.counts, failed: state.failed };
          const ended =
            state.failed.length === 0
              ? await finishOperation(tx, op.id, 'succeeded', { result, waitingFor })
              : await finishOperation(tx, op.id, 'failed', {
                  result,
                  waitingFor,
                  error: {
                    message: `${state.failed.length} of ${record.nodeIds.length} nodes did not drain: ${describeFailed(state.failed)}`,
                    failed: state.failed.length,
                  },
                });
          return { progress: progressOf(ended!) as PoolDrainProgress, startable: 0 };
        }
        const recorded = await recordProgress(tx, op.id, {
          phase: 'draining',
          waitingFor,
          nextCheckAt: new Date(Date.now() + LOOK_AGAIN_AFTER_MS),
        });
        const running = state.draining.length + state.waitingForBudget.length;
        const startable = Math.min(record.maxConcurrent - running, state.pending.length);
        return { progress: progressOf(recorded!) as PoolDrainProgress, startable: Math.max(0, startable) };
      });
    },

    /**
     * The next node drains, up to `count` (at most `POOL_DRAIN_WAVE`), requested in shares of
     * `SHARE` nodes: one transaction each, with the pool drain's record locked, that requests no
     * more than `maxConcurrent` allows at that moment (so a wave of an earlier run, still being
     * recorded, counts too). Each node's drain is requested as any drain is (its start in the
     * outbox), under a savepoint of its own and an operation id derived from the pool drain's and
     * the node's, so a wave requested again finds what it recorded. A node already draining joins
     * its drain; one still drained by an earlier drain counts as drained; a refused one (its
     * savepoint rolled back) as failed, with the refusal; the joins and refusals are kept on the
     * record in the share's transaction. Each share commits on its own: the first node drains
     * start while later shares are being recorded. Answers how many nodes it requested.
     */
    async requestNodeDrains(input: { operationId: string; count: number }): Promise<number> {
      const wave = Math.min(input.count, POOL_DRAIN_WAVE);
      let requested = 0;
      while (requested < wave) {
        const share = await db.transaction(async (tx) => {
          const [op] = await tx
            .select()
            .from(operations)
            .where(eq(operations.id, input.operationId))
            .for('update');
          if (op?.status !== 'running') return 0;
          const record = op.result as unknown as PoolDrainResult;
          const state = await stateOf(tx, op);
          const running = state.draining.length + state.waitingForBudget.length;
          const room = Math.min(SHARE, wave - requested, record.maxConcurrent - running);
          const nodeIds = state.pending.slice(0, Math.max(0, room));
          const deadline = record.deadline ? deadlineOf(record.deadline, Date.now()) : null;
          const joined: string[] = [];
          const refused: FailedNode[] = [];
          for (const nodeId of nodeIds) {
            try {
              const drain = await tx.transaction((savepoint) =>
                requestDrain(savepoint, nodeId, {
                  actor: op.actor,
                  reason: op.reason,
                  deadline,
                  operationId: `op_${derivedUlid(op.id.slice('op_'.length), nodeId)}`,
                  parentOperationId: op.id,
                }),
              );
              if (drain.operation.parentOperationId !== op.id) joined.push(drain.operation.id);
            } catch (error) {
              const refusal = error instanceof DrydockError ? error : classifyDatabaseError(error);
              if (!(refusal instanceof DrydockError)) throw error;
              refused.push({ nodeId, operationId: null, code: refusal.code, message: refusal.message });
            }
          }
          if (joined.length > 0 || refused.length > 0) {
            const result: PoolDrainResult = {
              ...record,
              joined: [...(record.joined ?? []), ...joined],
              refused: [...(record.refused ?? []), ...refused],
            };
            await tx
              .update(operations)
              .set({ result: { ...result } })
              .where(eq(operations.id, op.id));
          }
          return nodeIds.length;
        });
        if (share === 0) break;
        requested += share;
      }
      return requested;
    },
  };
}

/** Where every selected node of the pool drain stands, from the records of the drains it follows. */
async function stateOf(db: DbOrTx, op: OperationRow): Promise<PoolDrainState> {
  const record = op.result as unknown as PoolDrainResult;
  const joined = record.joined ?? [];
  const drains = await db
    .select({
      id: operations.id,
      nodeId: operations.nodeId,
      status: operations.status,
      phase: operations.phase,
      error: operations.error,
      createdAt: operations.createdAt,
      deadline: operations.deadline,
      completedAt: operations.completedAt,
    })
    .from(operations)
    .where(
      joined.length > 0
        ? or(eq(operations.parentOperationId, op.id), inArray(operations.id, joined))
        : eq(operations.parentOperationId, op.id),
    )
    .orderBy(sql`${operations.id}`);
  const state: PoolDrainState = {
    pending: [],
    draining: [],
    waitingForBudget: [],
    drained: [],
    failed: [],
    seen: new Map(),
  };
  const releasing = await releasingDrains(db, drains);
  for (const drain of drains) {
    const nodeId = drain.nodeId!;
    const seen = drainSeen(drain, releasing.has(drain.id));
    state.seen.set(nodeId, seen);
    if (seen.now === 'waiting-for-budget') state.waitingForBudget.push(nodeId);
    else if (seen.now === 'drained') state.drained.push(nodeId);
    else if (seen.now === 'failed') state.failed.push(failedNode(nodeId, drain));
    else state.draining.push(nodeId);
  }
  for (const refused of record.refused ?? []) {
    const seen: DrainSeen = {
      operationId: null,
      requestedAt: null,
      deadline: null,
      endedAt: null,
      now: 'failed',
    };
    state.seen.set(refused.nodeId, seen);
    state.failed.push(refused);
  }
  state.pending = record.nodeIds.filter((nodeId) => !state.seen.has(nodeId));
  return state;
}

/**
 * The open drains among `drains` that took a slot of their pool's disruption budget: past their
 * deadline, they release their work by force (a drained node's slot is its drain's too, but that
 * drain is finished).
 */
async function releasingDrains(
  db: DbOrTx,
  drains: Pick<OperationRow, 'id' | 'status'>[],
): Promise<Set<string>> {
  const open = drains.filter((drain) => !isFinished(drain.status)).map((drain) => drain.id);
  if (open.length === 0) return new Set();
  const holding = await db
    .select({ operationId: disruptions.operationId })
    .from(disruptions)
    .where(and(inArray(disruptions.operationId, open), eq(disruptions.state, 'holding')));
  return new Set(holding.map((row) => row.operationId));
}

/** Where a node drain's record says its node stands; `releasing`: it holds a slot of the budget. */
function drainSeen(
  drain: Pick<OperationRow, 'id' | 'status' | 'phase' | 'createdAt' | 'deadline' | 'completedAt'>,
  releasing: boolean,
): DrainSeen {
  const standing = (): DrainSeen['now'] => {
    if (drain.status === 'succeeded') return 'drained';
    if (isFinished(drain.status)) return 'failed';
    if (drain.phase === 'waiting-for-budget') return 'waiting-for-budget';
    return releasing ? 'forced-release' : 'draining';
  };
  return {
    operationId: drain.id,
    requestedAt: drain.createdAt.toISOString(),
    deadline: isoOrNull(drain.deadline),
    endedAt: isoOrNull(drain.completedAt),
    now: standing(),
  };
}

/** A node drain that ended otherwise than drained, and why. */
function failedNode(
  nodeId: string,
  drain: { id: string; status: string; error: Record<string, unknown> | null },
): FailedNode {
  const error = drain.error ?? {};
  const text = (key: string) => (typeof error[key] === 'string' ? (error[key] as string) : undefined);
  return {
    nodeId,
    operationId: drain.id,
    code: drain.status === 'cancelled' ? 'CANCELLED' : (text('code') ?? 'FAILED'),
    message:
      drain.status === 'cancelled'
        ? 'the node drain was cancelled (uncordon, or cancelled by an operator)'
        : (text('reason') ?? text('message') ?? 'the node drain failed'),
  };
}

/**
 * The pool's disruption budget as its waiting node drains see it, read (not locked: it decides
 * nothing) in the look's transaction: its max, how many nodes hold a slot, and the first of them,
 * longest out first, with their hostnames and whether their drain still ends their work.
 */
async function budgetOf(tx: DbOrTx, poolId: string, waitingIds: string[]): Promise<PoolDrainBudget> {
  const [pool] = await tx.select({ policy: pools.policy }).from(pools).where(eq(pools.id, poolId));
  const [size] = await tx
    .select({ n: count() })
    .from(nodes)
    .where(and(eq(nodes.poolId, poolId), isNull(nodes.deletedAt)));
  const holders = await tx
    .select({
      nodeId: disruptions.nodeId,
      hostname: nodes.hostname,
      noScheduleReasons: nodes.noScheduleReasons,
      total: sql<number>`count(*) over ()`,
    })
    .from(disruptions)
    .innerJoin(nodes, eq(nodes.id, disruptions.nodeId))
    .where(and(eq(disruptions.poolId, poolId), eq(disruptions.state, 'holding')))
    .orderBy(asc(disruptions.since), asc(disruptions.nodeId))
    .limit(POOL_DRAIN_LISTED);
  const listed = waitingIds.slice(0, POOL_DRAIN_LISTED);
  const waiting = await tx
    .select({ nodeId: nodes.id, hostname: nodes.hostname })
    .from(nodes)
    .where(inArray(nodes.id, listed));
  return {
    max: budgetMax(pool?.policy.maxUnavailable, size?.n ?? 0),
    used: Number(holders[0]?.total ?? 0),
    holders: holders.map((h) => ({ nodeId: h.nodeId, hostname: h.hostname, draining: isDraining(h) })),
    // In the order the progress lists them.
    waiting: listed.flatMap((id) => waiting.filter((w) => w.nodeId === id)),
  };
}

/** The pool drain's progress from its state: exact counts, the first few nodes of each. */
function waitingForOf(
  record: PoolDrainResult,
  state: PoolDrainState,
  budget: PoolDrainBudget | null,
  timeline: PoolDrainNodeTimeline[],
): PoolDrainWaitingFor {
  const listed = <T>(items: T[]) => items.slice(0, POOL_DRAIN_LISTED);
  return {
    counts: {
      pending: state.pending.length,
      draining: state.draining.length,
      waitingForBudget: state.waitingForBudget.length,
      drained: state.drained.length,
      failed: state.failed.length,
    },
    nodes: {
      pending: listed(state.pending),
      draining: listed(state.draining),
      waitingForBudget: listed(state.waitingForBudget),
      drained: listed(state.drained),
      failed: listed(state.failed),
    },
    maxConcurrent: record.maxConcurrent,
    graceAfterStart: poolDrainDeadline(record.deadline).graceAfterStart,
    budget,
    timeline,
  };
}

/** The first few failed nodes and why, for the operation's error message. */
function describeFailed(failed: FailedNode[]): string {
  const shown = failed.slice(0, 5).map((f) => `${f.nodeId} (${f.code}: ${f.message})`);
  return failed.length > shown.length ? `${shown.join(', ')}, …` : shown.join(', ');
}
