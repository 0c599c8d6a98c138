import { and, eq, lt, sql } from 'drizzle-orm';
import type { EventType } from '../domain/events';
import type { Tx } from './client';
import { appendEvent } from './events';
import type { CommandRow } from './queries/commands';
import { nodeCommands, nodes } from './schema';

/** The `node.command.*` events and what each adds to the command, its action and who asked. */
type CommandEventType = Extract<EventType, `node.command.${string}`>;

/**
 * Appends the `node.command.*` event of a `run` command's step, in the caller's transaction: every
 * one names the command, its action and who asked for it (`requestedBy`); `actor` is who took the
 * step (the asker for `requested`, the node for its reports, `system:commands` for an expiry).
 */
export async function appendCommandEvent(
  tx: Tx,
  command: CommandRow,
  tenantId: string | null,
  event: { type: CommandEventType; actor: string; data?: Record<string, unknown> },
): Promise<void> {
  await appendEvent(tx, {
    nodeId: command.nodeId,
    tenantId,
    type: event.type,
    actor: event.actor,
    reason: command.reason,
    operationId: command.operationId,
    data: {
      commandId: command.id,
      action: command.action ?? '',
      requestedBy: command.requestedBy ?? event.actor,
      ...event.data,
    },
  } as Parameters<typeof appendEvent>[1]);
}

/**
 * Ends every pending command past its `expiresAt` `expired`, with its event, in the caller's
 * transaction (the liveness sweep's): it was never delivered and never will be. Answers how many.
 */
export async function expireOverdueCommands(tx: Tx): Promise<number> {
  const expired = await tx
    .update(nodeCommands)
    .set({ status: 'expired', finishedAt: sql`now()`, refuseReason: 'not delivered before it expired' })
    .where(and(eq(nodeCommands.status, 'pending'), lt(nodeCommands.expiresAt, sql`now()`)))
    .returning();
  if (expired.length === 0) return 0;
  const tenants = await tx
    .select({ id: nodes.id, tenantId: nodes.tenantId })
    .from(nodes)
    .where(sql`${nodes.id} in ${expired.map((c) => c.nodeId)}`);
  const tenantOf = new Map(tenants.map((n) => [n.id, n.tenantId]));
  for (const command of expired) {
    await appendCommandEvent(tx, command, tenantOf.get(command.nodeId) ?? null, {
      type: 'node.command.expired',
      actor: 'system:commands',
    });
  }
  return expired.length;
}
