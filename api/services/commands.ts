import { and, eq, sql } from 'drizzle-orm';
import { DrydockError } from '../../domain/errors';
import { actorOf, type Principal } from '../../domain/principal';
import { appendCommandEvent, queueRunCommand } from '../../db/commands';
import { lockNode, type NodeRow } from '../../db/nodes';
import type { CommandRow } from '../../db/queries/commands';
import { nodeCommands } from '../../db/schema';
import { wakeNode } from '../../db/wakeups';
import type { AppDeps } from '../env';
import { idempotencyOf } from '../idempotency';

/** Provision states whose agent takes a `run` command: admitted, and not on its way out for good. */
const RUNNABLE = ['adopting', 'adopted', 'failed', 'decommissioning'];

/** What a caller asks of a node's agent (`POST /v1/nodes/{id}/commands`). */
export interface RunRequest {
  principal: Principal;
  action: string;
  args: Record<string, string>;
  reason: string;
  expiresInMs: number;
  idempotencyKey?: string | null;
}

/**
 * Queues a `run` command for the node (docs/lifecycle/commands.md), in one transaction with the
 * node locked: its Idempotency-Key answered first (the command it recorded, or IDEMPOTENCY_KEY_REUSED
 * for another request), then the node's state and the action checked against what its agent
 * reported (`argsFor`), then the command recorded `pending` with `node.command.requested` and the
 * agent's long-poll woken. A node that is offline gets it when its agent comes back, until
 * `expiresAt`.
 */
export async function requestRunCommand(
  deps: Pick<AppDeps, 'db'>,
  node: NodeRow,
  request: RunRequest,
): Promise<{ command: CommandRow; created: boolean }> {
  const idempotency = idempotencyOf(request.principal, request.idempotencyKey, {
    route: 'command',
    nodeId: node.id,
    action: request.action,
    args: request.args,
    reason: request.reason,
    expiresInMs: request.expiresInMs,
  });
  return deps.db.transaction(async (tx) => {
    const locked = await lockNode(tx, node.id);
    if (idempotency) {
      const [earlier] = await tx
        .select()
        .from(nodeCommands)
        .where(
          and(
            eq(nodeCommands.idempotencyScope, idempotency.scope),
            eq(nodeCommands.idempotencyKey, idempotency.key),
          ),
        );
      if (earlier) {
        if (earlier.requestHash !== idempotency.hash) {
          throw new DrydockError(
            'IDEMPOTENCY_KEY_REUSED',
            `Idempotency-Key ${idempotency.key} was used for another request (command ${earlier.id})`,
            { commandId: earlier.id },
          );
        }
        return { command: earlier, created: false };
      }
    }
    admit(locked);
    const command = await queueRunCommand(tx, locked, {
      action: request.action,
      args: request.args,
      reason: request.reason,
      requestedBy: actorOf(request.principal),
      expiresInMs: request.expiresInMs,
      idempotency,
    });
    return { command, created: true };
  });
}

/** INVALID_STATE unless the node's agent takes commands: admitted, allowed, not leaving for good. */
function admit(node: NodeRow): void {
  if (node.deletedAt) throw new DrydockError('NOT_FOUND', `node ${node.id} not found`);
  if (node.access === 'blocked') {
    throw new DrydockError(
      'INVALID_STATE',
      `node ${node.id} is blocked: its agent is refused all but a purge; unblock it first (drydock nodes unblock ${node.id})`,
      { access: node.access },
    );
  }
  if (!RUNNABLE.includes(node.provisionState)) {
    const next =
      node.provisionState === 'pending'
        ? `; approve it first (drydock nodes approve ${node.id} --pool POOL)`
        : '';
    throw new DrydockError(
      'INVALID_STATE',
      `node ${node.id} is ${node.provisionState}: its agent takes no commands${next}`,
      { provisionState: node.provisionState },
    );
  }
}

/**
 * Withdraws a `run` command the node has not started (`cancelled`, `node.command.cancelled`, one
 * transaction). One already cancelled answers as it is; one running or ended is INVALID_STATE:
 * what runs on the node is not stopped from here.
 */
export async function cancelRunCommand(
  deps: Pick<AppDeps, 'db'>,
  command: CommandRow,
  principal: Principal,
): Promise<CommandRow> {
  return deps.db.transaction(async (tx) => {
    const node = await lockNode(tx, command.nodeId);
    const [current] = await tx
      .select()
      .from(nodeCommands)
      .where(eq(nodeCommands.id, command.id))
      .for('update');
    if (current!.status === 'cancelled') return current!;
    if (current!.kind !== 'run' || current!.operationId) {
      throw new DrydockError(
        'INVALID_STATE',
        `command ${command.id} belongs to operation ${current!.operationId ?? 'of its kind'}: cancel that instead`,
        { operationId: current!.operationId },
      );
    }
    if (current!.status !== 'pending') {
      throw new DrydockError(
        'INVALID_STATE',
        `command ${command.id} is ${current!.status}: only a command the node has not started can be cancelled`,
        { status: current!.status },
      );
    }
    const [cancelled] = await tx
      .update(nodeCommands)
      .set({
        status: 'cancelled',
        finishedAt: sql`now()`,
        refuseReason: `cancelled by ${actorOf(principal)}`,
      })
      .where(eq(nodeCommands.id, command.id))
      .returning();
    await appendCommandEvent(tx, cancelled!, node.tenantId, {
      type: 'node.command.cancelled',
      actor: actorOf(principal),
    });
    await wakeNode(tx, node.id);
    return cancelled!;
  });
}
