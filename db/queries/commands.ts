import { and, asc, eq, inArray } from 'drizzle-orm';
import { OPEN_COMMAND_STATUSES } from '../../domain/command-status';
import type { DbOrTx } from '../client';
import { nodeCommands } from '../schema';

export type CommandRow = typeof nodeCommands.$inferSelect;

/** A command as its agent sees it on the command stream. */
export function commandView(command: CommandRow) {
  return {
    id: command.id,
    kind: command.kind,
    action: command.action,
    /** The condition a `remediate` command is for; null for other kinds. */
    condition: (command.data as { condition?: string } | null)?.condition ?? null,
    payload: command.payload,
    signature: command.signature,
    createdAt: command.createdAt.toISOString(),
  };
}

/** The node's open commands, oldest first, at most 20; `purgeOnly` for a blocked node. */
export async function openCommands(db: DbOrTx, nodeId: string, purgeOnly: boolean): Promise<CommandRow[]> {
  return db
    .select()
    .from(nodeCommands)
    .where(
      and(
        eq(nodeCommands.nodeId, nodeId),
        inArray(nodeCommands.status, OPEN_COMMAND_STATUSES),
        purgeOnly ? eq(nodeCommands.kind, 'purge') : undefined,
      ),
    )
    .orderBy(asc(nodeCommands.createdAt), asc(nodeCommands.id))
    .limit(20);
}
