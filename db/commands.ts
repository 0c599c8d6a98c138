import { and, eq, lt, sql } from 'drizzle-orm';
import type { EventType } from '../domain/events';
import type { Tx } from './client';
import { appendEvent } from './events';
import { newId } from '../domain/ids';
import { argsFor } from '../domain/node-command';
import type { NodeRow } from './nodes';
import { reportedActions, type CommandRow } from './queries/commands';
import { wakeNode } from './wakeups';
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

/** A `run` command to queue: what to run, who asked and why, how long it may wait for the node. */
export interface RunCommandRequest {
  id?: string;
  action: string;
  args: Record<string, string>;
  reason: string | null;
  requestedBy: string;
  expiresInMs: number;
  /** The maintenance that runs it, if any: its workflow is woken when it ends. */
  operationId?: string | null;
  idempotency?: { scope: string; key: string; hash: string } | null;
}

/**
 * Queues a `run` command for a node its caller locked, in the caller's transaction: recorded
 * `pending` with `node.command.requested`, and the agent's long-poll woken. The arguments are
 * checked against the actions the agent said it runs (`argsFor`, INVALID_INPUT).
 */
export async function queueRunCommand(
  tx: Tx,
  node: NodeRow,
  request: RunCommandRequest,
): Promise<CommandRow> {
  const args = argsFor(await reportedActions(tx, node.id), request.action, request.args);
  const [command] = await tx
    .insert(nodeCommands)
    .values({
      id: request.id ?? newId('cmd'),
      nodeId: node.id,
      kind: 'run',
      action: request.action,
      args,
      reason: request.reason,
      requestedBy: request.requestedBy,
      operationId: request.operationId ?? null,
      expiresAt: sql`now() + make_interval(secs => ${request.expiresInMs / 1000})`,
      idempotencyScope: request.idempotency?.scope ?? null,
      idempotencyKey: request.idempotency?.key ?? null,
      requestHash: request.idempotency?.hash ?? null,
    })
    .returning();
  await appendCommandEvent(tx, command!, node.tenantId, {
    type: 'node.command.requested',
    actor: request.requestedBy,
    data: { args, expiresAt: command!.expiresAt!.toISOString() },
  });
  await wakeNode(tx, node.id);
  return command!;
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
