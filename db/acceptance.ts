import { and, desc, eq, sql } from 'drizzle-orm';
import {
  ACCEPTANCE_ACTOR,
  DEFAULT_ACCEPTANCE_EXPIRES_IN,
  actionFailure,
  isAcceptanceReason,
  nodeCheckFailures,
  reasonsWithFailures,
  withoutAcceptanceReasons,
  type AcceptanceFailure,
} from '../domain/acceptance';
import type { NodeChange } from '../domain/controls';
import { parseDuration } from '../domain/duration';
import { sameJson } from '../domain/pool';
import type { Tx } from './client';
import { queueRunCommand } from './commands';
import { applyNodeChange, lockNode, type ChangeContext, type NodeRow } from './nodes';
import type { CommandRow } from './queries/commands';
import { nodeCommands, nodes, pools, schedulerEntries } from './schema';

/** The node's newest acceptance command (the one its present acceptance waits on), if any. */
async function latestAcceptanceCommand(tx: Tx, nodeId: string): Promise<CommandRow | undefined> {
  const [command] = await tx
    .select()
    .from(nodeCommands)
    .where(
      and(
        eq(nodeCommands.nodeId, nodeId),
        eq(nodeCommands.kind, 'run'),
        eq(nodeCommands.requestedBy, ACCEPTANCE_ACTOR),
      ),
    )
    .orderBy(desc(nodeCommands.createdAt), desc(nodeCommands.id))
    .limit(1);
  return command;
}

const SYSTEM: ChangeContext = { actor: ACCEPTANCE_ACTOR };

const isOpen = (command: CommandRow | undefined) =>
  command !== undefined && (command.status === 'pending' || command.status === 'running');

/** `adopting` → `adopted`, its acceptance reasons gone, and its scheduler entry; in the caller's transaction. */
async function adopt(tx: Tx, node: NodeRow, context: ChangeContext = SYSTEM): Promise<NodeRow> {
  const after = await applyNodeChange(
    tx,
    node,
    {
      patch: {
        provisionState: 'adopted',
        noScheduleReasons: withoutAcceptanceReasons(node.noScheduleReasons),
      },
      event: { type: 'node.adopted' },
    },
    context,
  );
  // The scheduler's current entry for a node it may place on.
  await tx
    .insert(schedulerEntries)
    .values({ nodeId: node.id, poolId: after.poolId })
    .onConflictDoUpdate({
      target: schedulerEntries.nodeId,
      set: { poolId: after.poolId, updatedAt: new Date() },
    });
  return after;
}

/**
 * Records the failed checks: `acceptance:<check>` for each, one `node.acceptance.failed` event per
 * check. Finding them recorded already (a retry) changes nothing.
 */
async function recordFailures(
  tx: Tx,
  node: NodeRow,
  failures: AcceptanceFailure[],
  commandId?: string,
): Promise<NodeRow> {
  const reasons = reasonsWithFailures(node.noScheduleReasons, failures);
  if (sameJson(reasons, node.noScheduleReasons)) return node;
  let after = node;
  for (const [i, failure] of failures.entries()) {
    const change: NodeChange = {
      // The reasons change once, with the first event; each further check is its own event.
      patch: i === 0 ? { noScheduleReasons: reasons } : {},
      event: {
        type: 'node.acceptance.failed',
        data: { check: failure.check, reason: failure.reason, ...(commandId ? { commandId } : {}) },
      },
    };
    after = await applyNodeChange(tx, after, change, { actor: ACCEPTANCE_ACTOR, reason: failure.reason });
  }
  return after;
}

/**
 * Acceptance runs (at join, approve and adopt), inside the caller's transaction, on an `adopting`
 * node (any other is returned as it is). A run of the pool's acceptance action under way is left
 * to finish: its end decides (a retried adopt queues nothing twice). Otherwise the node's own
 * checks are made: failing, they are recorded; passing, the pool's acceptance action is queued
 * as a `run` command (`node.acceptance.started`), or, without one, the node is `adopted` (the
 * event's actor and reason are `context`'s: the adopt's caller, or the system).
 */
export async function runAcceptance(
  tx: Tx,
  nodeId: string,
  context: ChangeContext = SYSTEM,
): Promise<NodeRow> {
  const node = await lockNode(tx, nodeId);
  if (node.provisionState !== 'adopting') return node;
  if (isOpen(await latestAcceptanceCommand(tx, nodeId))) return node;
  const failures = nodeCheckFailures({
    ...node,
    noScheduleReasons: withoutAcceptanceReasons(node.noScheduleReasons),
  });
  if (failures.length > 0) return recordFailures(tx, node, failures);
  const [pool] = node.poolId
    ? await tx.select({ policy: pools.policy }).from(pools).where(eq(pools.id, node.poolId))
    : [];
  const plan = pool?.policy.acceptance;
  if (!plan?.action) return adopt(tx, node, context);
  const command = await queueRunCommand(tx, node, {
    action: plan.action,
    args: {},
    reason: 'acceptance',
    requestedBy: ACCEPTANCE_ACTOR,
    expiresInMs: parseDuration(plan.expiresIn ?? DEFAULT_ACCEPTANCE_EXPIRES_IN)!,
  });
  return applyNodeChange(
    tx,
    node,
    {
      patch: { noScheduleReasons: withoutAcceptanceReasons(node.noScheduleReasons) },
      event: { type: 'node.acceptance.started', data: { commandId: command.id, action: plan.action } },
    },
    { actor: ACCEPTANCE_ACTOR, reason: 'acceptance' },
  );
}

/**
 * A `run` command ended (the agent's result, an expiry, a cancel): when it is the acceptance
 * command an `adopting` node waits on, acceptance decides — the node's own checks, then
 * `adopted`; or the failure recorded (`acceptance:action`, `node.acceptance.failed`). Anything
 * else, or a command whose end was decided already, changes nothing. Inside the caller's
 * transaction; called by `answerCommand` (api/services/agent.ts) and the liveness sweep.
 */
export async function onRunCommandEnded(
  tx: Tx,
  node: Pick<NodeRow, 'id'>,
  command: CommandRow,
): Promise<void> {
  if (command.kind !== 'run' || command.requestedBy !== ACCEPTANCE_ACTOR || isOpen(command)) return;
  const locked = await lockNode(tx, node.id);
  if (locked.provisionState !== 'adopting') return;
  const latest = await latestAcceptanceCommand(tx, node.id);
  // An older run (adopt queued another since), or this one's end already recorded.
  if (latest?.id !== command.id || locked.noScheduleReasons.some(isAcceptanceReason)) return;
  const failed = actionFailure(latest);
  if (failed) {
    await recordFailures(tx, locked, [failed], command.id);
    return;
  }
  const failures = nodeCheckFailures(locked);
  if (failures.length > 0) await recordFailures(tx, locked, failures, command.id);
  else await adopt(tx, locked);
}

/**
 * The liveness sweep's part (in its transaction): acceptance commands that ended without a result
 * from the agent — expired before it took them, or withdrawn — fail acceptance; and any ended
 * acceptance command whose end nobody recorded yet is decided now. Answers how many it decided.
 */
export async function settleAcceptances(tx: Tx): Promise<number> {
  const waiting = await tx.execute<{ node_id: string; command_id: string }>(sql`
    select n.id as node_id, c.id as command_id
    from ${nodes} n
    join lateral (
      select id, status from ${nodeCommands} c
      where c.node_id = n.id and c.kind = 'run' and c.requested_by = ${ACCEPTANCE_ACTOR}
      order by c.created_at desc, c.id desc
      limit 1
    ) c on true
    where n.provision_state = 'adopting' and n.deleted_at is null
      and c.status not in ('pending', 'running')
      and not exists (select 1 from unnest(n.no_schedule_reasons) r where r like 'acceptance:%')
    limit 100`);
  for (const row of waiting) {
    const [command] = await tx.select().from(nodeCommands).where(eq(nodeCommands.id, row.command_id));
    await onRunCommandEnded(tx, { id: row.node_id }, command!);
  }
  return waiting.length;
}
