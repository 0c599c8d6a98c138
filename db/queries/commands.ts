import { and, asc, desc, eq, gt, inArray, isNull, lt, or, sql } from 'drizzle-orm';
import { OPEN_COMMAND_STATUSES, type CommandStatus } from '../../domain/command-status';
import type { DbOrTx } from '../client';
import type { ReportedAction } from '../schema/agent-actions';
import { agentActions, nodeCommands } from '../schema';
import { isoOrNull } from './dates';

export type CommandRow = typeof nodeCommands.$inferSelect;

/** A command as its agent sees it on the command stream. */
export function commandView(command: CommandRow) {
  return {
    id: command.id,
    kind: command.kind,
    action: command.action,
    /** The condition a `remediate` command is for; null for other kinds. */
    condition: (command.data as { condition?: string } | null)?.condition ?? null,
    /** The values of a `run` command's parameters; null for other kinds. */
    args: command.args,
    payload: command.payload,
    signature: command.signature,
    createdAt: command.createdAt.toISOString(),
  };
}

/**
 * A command as people see it (`GET /v1/commands/{id}`, docs/lifecycle/commands.md): what was asked,
 * by whom, where it stands and, with `output`, what the action printed.
 */
export function runCommandView(command: CommandRow, output: boolean) {
  return {
    id: command.id,
    nodeId: command.nodeId,
    kind: command.kind,
    action: command.action,
    args: command.args ?? {},
    status: command.status,
    /** Why it was refused, failed or returned. */
    statusReason: command.refuseReason,
    requestedBy: command.requestedBy,
    reason: command.reason,
    operationId: command.operationId,
    createdAt: command.createdAt.toISOString(),
    expiresAt: isoOrNull(command.expiresAt),
    startedAt: isoOrNull(command.startedAt),
    finishedAt: isoOrNull(command.finishedAt),
    exitCode: command.exitCode,
    output: output
      ? {
          stdout: command.stdout ?? '',
          stderr: command.stderr ?? '',
          droppedBytes: command.outputDropped ?? 0,
        }
      : null,
  };
}
export type RunCommandView = ReturnType<typeof runCommandView>;

/** One command of a node by id. */
export async function findCommand(db: DbOrTx, id: string): Promise<CommandRow | undefined> {
  const [command] = await db.select().from(nodeCommands).where(eq(nodeCommands.id, id));
  return command;
}

/** The node's commands, newest first, after the cursor's command (its id: ids sort by time). */
export async function listNodeCommands(
  db: DbOrTx,
  nodeId: string,
  q: { kind?: CommandRow['kind']; status?: CommandStatus; before?: string; limit: number },
): Promise<CommandRow[]> {
  return db
    .select()
    .from(nodeCommands)
    .where(
      and(
        eq(nodeCommands.nodeId, nodeId),
        q.kind ? eq(nodeCommands.kind, q.kind) : undefined,
        q.status ? eq(nodeCommands.status, q.status) : undefined,
        q.before ? lt(nodeCommands.id, q.before) : undefined,
      ),
    )
    .orderBy(desc(nodeCommands.id))
    .limit(q.limit);
}

/**
 * The node's open commands, oldest first, at most 20; `purgeOnly` for a blocked node. A pending
 * command past its `expiresAt` is not delivered (the liveness sweep ends it `expired`).
 */
export async function openCommands(db: DbOrTx, nodeId: string, purgeOnly: boolean): Promise<CommandRow[]> {
  return db
    .select()
    .from(nodeCommands)
    .where(
      and(
        eq(nodeCommands.nodeId, nodeId),
        inArray(nodeCommands.status, OPEN_COMMAND_STATUSES),
        or(
          isNull(nodeCommands.expiresAt),
          gt(nodeCommands.expiresAt, sql`now()`),
          eq(nodeCommands.status, 'running'),
        ),
        purgeOnly ? eq(nodeCommands.kind, 'purge') : undefined,
      ),
    )
    .orderBy(asc(nodeCommands.createdAt), asc(nodeCommands.id))
    .limit(20);
}

/** The actions the node's agent said it runs at its latest session start, and when; none if it never said. */
export async function reportedActionsOf(
  db: DbOrTx,
  nodeId: string,
): Promise<{ actions: ReportedAction[]; reportedAt: Date } | undefined> {
  const [row] = await db.select().from(agentActions).where(eq(agentActions.nodeId, nodeId));
  return row;
}

/** The actions the node's agent said it runs; null if it never said. */
export async function reportedActions(db: DbOrTx, nodeId: string): Promise<ReportedAction[] | null> {
  return (await reportedActionsOf(db, nodeId))?.actions ?? null;
}
