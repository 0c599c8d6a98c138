import { createPublicKey } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { answerEffect, type CommandAnswer } from '../../domain/command-status';
import { DrydockError } from '../../domain/errors';
import type { Principal } from '../../domain/principal';
import { openCommands, type CommandRow } from '../../db/queries/commands';
import { appendCommandEvent } from '../../db/commands';
import type { Tx } from '../../db/client';
import { appendEvent } from '../../db/events';
import { onRunCommandEnded } from '../../db/acceptance';
import { joinNode, type JoinRequest } from '../../db/join';
import { lockNode, type NodeRow } from '../../db/nodes';
import { agentActions, nodeCommands, nodes } from '../../db/schema';
import type { ReportedAction } from '../../db/schema/agent-actions';
import { enqueueWake } from '../../db/outbox';
import { wakeMaintenance } from '../../db/maintenance';
import { maintenanceWorkflowId, purgeWorkflowId, remediationWorkflowId } from '../../workflows/definitions';
import { refuseExpired, requireAgent } from '../auth';
import type { AppDeps } from '../env';
import { rateLimited } from '../rate-limit';

/**
 * A machine joins (db/join.ts). A token-less join creates a pending node with no credential
 * checked: the one unauthenticated write, so it is limited per address (`source`). A join with a
 * token is bounded by the token's uses.
 */
export async function join(deps: AppDeps, request: JoinRequest, source: string) {
  assertEd25519(request.publicKey);
  if (request.token === undefined) {
    const wait = await deps.rateLimits.tokenlessJoins.take(source);
    if (wait > 0) {
      throw rateLimited(wait, `too many joins without a token from this address; retry in ${wait} s`);
    }
  }
  return joinNode(deps.db, request);
}

function assertEd25519(pem: string): void {
  try {
    const key = createPublicKey(pem);
    if (key.asymmetricKeyType === 'ed25519') return;
  } catch {
    // fall through: not a key at all
  }
  throw new DrydockError(
    'INVALID_INPUT',
    'publicKey must be an Ed25519 public key in PEM (SubjectPublicKeyInfo)',
  );
}

/** How often a long-poll looks again even without a wake-up (another process's NOTIFY lost). */
const RECHECK_MS = 5_000;

/** What `requireAgent` asks of a node waiting for commands: it may be blocked (purge) or not admitted. */
const WAITING = { purgeOnly: true, beforeAdmission: true };

/**
 * The agent's long-poll: the node's open commands as soon as it has any, or none once `waitMs`
 * passed or the caller went away. Each look re-checks the credential and the node, so a block or
 * a revoke ends the session; a blocked node still gets a purge (docs/lifecycle/purge.md).
 */
export async function waitForCommands(
  deps: AppDeps,
  input: { principal: Principal; node: NodeRow; credential: string; waitMs: number; signal: AbortSignal },
): Promise<CommandRow[]> {
  const { principal, node, signal } = input;
  const deadline = Date.now() + input.waitMs;
  for (;;) {
    // Armed before the look, so a command queued while we read is a wake-up, not a 5 s wait.
    const wakeup = deps.wakeups.arm(node.id);
    try {
      const current = await deps.nodeCredentials.resolve(input.credential);
      if (!current) throw new DrydockError('UNAUTHENTICATED', 'the node credential was revoked');
      refuseExpired(current);
      const blocked = current.node.access === 'blocked';
      requireAgent(principal, current.node, WAITING);
      const items = await openCommands(deps.db, node.id, blocked);
      // With no purge queued, a blocked node's session closes.
      if (blocked && items.length === 0) requireAgent(principal, current.node, { beforeAdmission: true });
      const left = deadline - Date.now();
      if (items.length > 0 || left <= 0) return items;
      await wakeup.wait(Math.min(left, RECHECK_MS), signal);
      if (signal.aborted) return [];
    } finally {
      wakeup.cancel();
    }
  }
}

/** What a `run` command printed, as its agent kept it (docs/lifecycle/commands.md). */
export interface RunOutput {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  droppedBytes: number;
}

/** The reports each kind of command takes: a purge or a rung is answered once; a run starts, then ends. */
const REPORTS: Record<CommandRow['kind'], readonly CommandAnswer[]> = {
  purge: ['acked', 'refused'],
  remediate: ['acked', 'refused'],
  run: ['running', 'refused', 'succeeded', 'failed', 'returned'],
};

/**
 * The node's report on one of its commands, in one transaction: its answer (final for a purge or
 * a rung), or a `run` command's start and its end with the output. The same report again changes
 * nothing; one the command's status does not allow is INVALID_STATE (`answerEffect`), one its kind
 * never takes INVALID_INPUT. A purge refusal appends `node.purge.refused`; each step of a `run`
 * command its `node.command.*` event. The workflow waiting on the answer is woken, through the
 * outbox in the same transaction (a refused rung escalates now, not at the attempt's deadline).
 */
export async function answerCommand(
  deps: Pick<AppDeps, 'db'>,
  input: {
    node: NodeRow;
    commandId: string;
    answer: CommandAnswer;
    reason: string | null;
    output?: RunOutput;
  },
): Promise<CommandRow> {
  const { node, commandId: id, answer, reason } = input;
  return deps.db.transaction(async (tx) => {
    const [command] = await tx
      .select()
      .from(nodeCommands)
      .where(and(eq(nodeCommands.id, id), eq(nodeCommands.nodeId, node.id)))
      .for('update');
    if (!command || (node.access === 'blocked' && command.kind !== 'purge')) {
      throw new DrydockError('NOT_FOUND', `command ${id} not found`, { commandId: id });
    }
    if (!REPORTS[command.kind].includes(answer)) {
      throw new DrydockError(
        'INVALID_INPUT',
        `command ${id} is a ${command.kind} command: it is not reported ${answer}`,
        {
          kind: command.kind,
        },
      );
    }
    const effect = answerEffect(command.status, answer);
    if (effect === 'repeat') return command;
    if (effect === 'conflict') {
      throw new DrydockError('INVALID_STATE', `command ${id} is already ${command.status}`, {
        status: command.status,
      });
    }
    const [updated] = await tx
      .update(nodeCommands)
      .set(
        answer === 'running'
          ? { status: answer, startedAt: sql`now()` }
          : {
              status: answer,
              finishedAt: sql`now()`,
              refuseReason: reason,
              ...(input.output
                ? {
                    exitCode: input.output.exitCode,
                    stdout: input.output.stdout,
                    stderr: input.output.stderr,
                    outputDropped: input.output.droppedBytes,
                  }
                : {}),
            },
      )
      .where(eq(nodeCommands.id, id))
      .returning();
    if (command.kind === 'purge' && answer === 'refused') {
      await appendEvent(tx, {
        nodeId: node.id,
        tenantId: node.tenantId,
        type: 'node.purge.refused',
        actor: `node:${node.id}`,
        reason,
        operationId: command.operationId,
        data: { commandId: id },
      });
    }
    if (command.kind === 'run') await appendRunEvent(tx, updated!, node, answer, reason ?? '');
    await onRunCommandEnded(tx, node, updated!);
    if (command.operationId) {
      const workflowOf = {
        purge: purgeWorkflowId,
        remediate: remediationWorkflowId,
        run: maintenanceWorkflowId,
      };
      await enqueueWake(tx, workflowOf[command.kind](node.id), `command ${id} ${answer}`);
    }
    return updated!;
  });
}

/** The `node.command.*` event of a run command's report. */
async function appendRunEvent(
  tx: Tx,
  command: CommandRow,
  node: NodeRow,
  answer: CommandAnswer,
  reason: string,
) {
  const event = { actor: `node:${node.id}` };
  switch (answer) {
    case 'running':
      return appendCommandEvent(tx, command, node.tenantId, { ...event, type: 'node.command.started' });
    case 'succeeded':
      return appendCommandEvent(tx, command, node.tenantId, {
        ...event,
        type: 'node.command.succeeded',
        data: { exitCode: command.exitCode ?? 0 },
      });
    case 'failed':
      return appendCommandEvent(tx, command, node.tenantId, {
        ...event,
        type: 'node.command.failed',
        data: { exitCode: command.exitCode, reason },
      });
    case 'returned':
    case 'refused':
      return appendCommandEvent(tx, command, node.tenantId, {
        ...event,
        type: answer === 'returned' ? 'node.command.returned' : 'node.command.refused',
        data: { reason },
      });
    case 'acked':
      return;
  }
}

/**
 * The node says it came back from the restarting action (a reboot) of its acked `remediate`
 * command `commandId`: in one transaction, `returnedAt` is set on the command and
 * `node.remediation.returned` appended — once; a report again changes nothing and answers the
 * first time. Only the node's own acked remediate command; any other is NOT_FOUND or INVALID_STATE.
 */
export async function reportReturned(
  deps: Pick<AppDeps, 'db'>,
  input: { node: NodeRow; commandId: string },
): Promise<{ command: CommandRow; returnedAt: string }> {
  const { node, commandId: id } = input;
  return deps.db.transaction(async (tx) => {
    const [command] = await tx
      .select()
      .from(nodeCommands)
      .where(and(eq(nodeCommands.id, id), eq(nodeCommands.nodeId, node.id)))
      .for('update');
    if (!command) throw new DrydockError('NOT_FOUND', `command ${id} not found`, { commandId: id });
    if (command.kind !== 'remediate') {
      throw new DrydockError('INVALID_STATE', `command ${id} is a ${command.kind} command, not remediate`, {
        kind: command.kind,
      });
    }
    if (command.status !== 'acked') {
      throw new DrydockError('INVALID_STATE', `command ${id} is ${command.status}, not acked`, {
        status: command.status,
      });
    }
    const data = command.data as { attempt?: number; returnedAt?: string };
    if (data.returnedAt !== undefined) return { command, returnedAt: data.returnedAt };
    const returnedAt = new Date().toISOString();
    const [updated] = await tx
      .update(nodeCommands)
      .set({ data: { ...command.data, returnedAt } })
      .where(eq(nodeCommands.id, id))
      .returning();
    await appendEvent(tx, {
      nodeId: node.id,
      tenantId: node.tenantId,
      type: 'node.remediation.returned',
      actor: `node:${node.id}`,
      operationId: command.operationId,
      data: {
        commandId: id,
        action: command.action ?? '',
        ...(typeof data.attempt === 'number' ? { attempt: data.attempt } : {}),
      },
    });
    return { command: updated!, returnedAt };
  });
}

/**
 * What the agent says of the machine at the start of a session (`PUT /v1/agent/facts`), in one
 * transaction with the node locked: its boot on the node (`bootId`, `bootedAt`; no version, as a
 * heartbeat's `lastSeenAt`) and the actions it runs in `agent_actions`. A boot id other than the
 * last reported (or the first) appends `node.booted`: the machine started since. Answers whether
 * it did.
 */
export async function reportFacts(
  deps: Pick<AppDeps, 'db'>,
  node: NodeRow,
  facts: { bootId: string; bootedAt: string; actions: ReportedAction[] },
): Promise<boolean> {
  return deps.db.transaction(async (tx) => {
    const locked = await lockNode(tx, node.id);
    const reportedAt = new Date();
    await tx
      .insert(agentActions)
      .values({ nodeId: node.id, actions: facts.actions, reportedAt })
      .onConflictDoUpdate({ target: agentActions.nodeId, set: { actions: facts.actions, reportedAt } });
    if (locked.bootId === facts.bootId) return false;
    const bootedAt = new Date(facts.bootedAt);
    await tx.update(nodes).set({ bootId: facts.bootId, bootedAt }).where(eq(nodes.id, node.id));
    // A maintenance waiting for the node to come back from its reboot looks again.
    await wakeMaintenance(tx, node.id, `booted ${facts.bootId}`);
    await appendEvent(tx, {
      nodeId: node.id,
      tenantId: locked.tenantId,
      type: 'node.booted',
      actor: `node:${node.id}`,
      data: { bootId: facts.bootId, bootedAt: bootedAt.toISOString(), previousBootId: locked.bootId },
    });
    return true;
  });
}
