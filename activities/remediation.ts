import { and, eq, sql } from 'drizzle-orm';
import type { CommandStatus } from '../domain/command-status';
import { newId } from '../domain/ids';
import type { RemediationProgress, RemediationWaitingFor } from '../domain/progress';
import { conditionReason, type AttemptRecord, type RemediationPlan } from '../domain/remediation';
import type { Db, Tx } from '../db/client';
import { appendEvent } from '../db/events';
import { lockNode, type NodeRow } from '../db/nodes';
import { finishOperation, operationOf, recordProgress, type OperationRow } from '../db/operations';
import { progressOf } from '../db/queries/operations';
import { cancelRungCommands, escalateRemediation } from '../db/remediation';
import { requestNextRemediation, type RemediationRecord } from '../db/requests/remediation';
import { nodeCommands, nodes } from '../db/schema';
import { wakeNode } from '../db/wakeups';
import type { WorkerMetrics } from '../observability/metrics';
import { beginOperationRun } from './begin';

/** Where an attempt stands: the condition, the command's answer, the operation ended from outside. */
export interface AttemptCheck {
  cleared: boolean;
  command: CommandStatus;
  refuseReason: string | null;
  /**
   * The operation's record once it ended while this run waited (cancelled, its node deleted, or by
   * a step of this very run in a workflow task Temporal discarded); null while it runs.
   */
  ended: RemediationProgress | null;
}

type OperationInput = { nodeId: string; operationId: string };

export function createRemediationActivities(db: Db, metrics?: WorkerMetrics) {
  return {
    /**
     * The remediation's workflow begins its operation (`beginOperationRun`): its progress and the
     * plan it recorded (ladder, attempt timeout), or how it ended when that came before a worker.
     */
    async beginRemediation(input: {
      operationId: string;
    }): Promise<{ progress: RemediationProgress; plan: RemediationPlan }> {
      const op = await db.transaction((tx) => beginOperationRun(tx, input.operationId, 'attempting'));
      const plan = (op.result as unknown as RemediationRecord).plan;
      return { progress: progressOf(op) as RemediationProgress, plan };
    },

    /**
     * One rung: the action queued as a command to the node, `node.remediation.attempted`, and the
     * attempt (with the outcomes of those before it) on the operation, with its deadline. A retry
     * finds the rung's command and answers it. No command when the operation ended meanwhile: its
     * record as it ended.
     */
    async startAttempt(
      input: OperationInput & {
        attempt: number;
        action: string;
        attempts: AttemptRecord[];
        timeoutMs: number;
      },
    ): Promise<{ commandId: string | null; progress: RemediationProgress }> {
      return db.transaction(async (tx) => {
        const node = await lockNode(tx, input.nodeId);
        const op = await operationOf(tx, input.operationId);
        if (op.status !== 'running')
          return { commandId: null, progress: progressOf(op) as RemediationProgress };
        const [existing] = await tx
          .select()
          .from(nodeCommands)
          .where(
            and(
              eq(nodeCommands.operationId, input.operationId),
              sql`${nodeCommands.data}->>'attempt' = ${String(input.attempt)}`,
            ),
          );
        if (existing) return { commandId: existing.id, progress: progressOf(op) as RemediationProgress };
        const waited = op.waitingFor as RemediationWaitingFor;
        // The previous rung's command, if still unanswered, is moot now.
        await cancelRungCommands(tx, input.operationId);
        const commandId = newId('cmd');
        await tx.insert(nodeCommands).values({
          id: commandId,
          nodeId: node.id,
          kind: 'remediate',
          action: input.action,
          operationId: input.operationId,
          data: { attempt: input.attempt, condition: waited.condition },
        });
        await appendEvent(tx, {
          nodeId: node.id,
          tenantId: node.tenantId,
          type: 'node.remediation.attempted',
          actor: 'system:remediation',
          operationId: input.operationId,
          data: { attempt: input.attempt, action: input.action, condition: waited.condition, commandId },
        });
        await wakeNode(tx, node.id);
        const deadline = new Date(Date.now() + input.timeoutMs);
        const recorded = await recordProgress(tx, op.id, {
          phase: 'attempting',
          waitingFor: {
            ...waited,
            attempt: input.attempt,
            action: input.action,
            attemptDeadline: deadline.toISOString(),
            attempts: [
              ...input.attempts,
              { attempt: input.attempt, action: input.action, commandId, outcome: null },
            ],
          },
          nextCheckAt: deadline,
        });
        return { commandId, progress: progressOf(recorded!) as RemediationProgress };
      });
    },

    /** Where an attempt stands: the condition cleared, the command's answer, the operation ended. */
    async checkAttempt(
      input: OperationInput & { commandId: string; condition: string },
    ): Promise<AttemptCheck> {
      const [node] = await db.select().from(nodes).where(eq(nodes.id, input.nodeId));
      const [command] = await db.select().from(nodeCommands).where(eq(nodeCommands.id, input.commandId));
      const op = await operationOf(db, input.operationId);
      return {
        cleared: !node?.noScheduleReasons.includes(conditionReason(input.condition)),
        command: command?.status ?? 'cancelled',
        refuseReason: command?.refuseReason ?? null,
        ended: op.status === 'running' ? null : (progressOf(op) as RemediationProgress),
      };
    },

    /**
     * Cleared, in one transaction: `node.remediation.succeeded`, the operation succeeded with its
     * attempts, the rung's command no longer needed; the node's next waiting condition requested.
     */
    async succeedRemediation(
      input: OperationInput & { attempts: AttemptRecord[] },
    ): Promise<RemediationProgress> {
      let succeeded = false;
      const progress = await db.transaction(async (tx) => {
        const node = await lockNode(tx, input.nodeId);
        const op = await operationOf(tx, input.operationId);
        if (op.status !== 'running') return progressOf(op) as RemediationProgress;
        const waitingFor = endedWith(op, input.attempts);
        const finished = await finishOperation(tx, op.id, 'succeeded', {
          result: { ...op.result, attempts: input.attempts },
          waitingFor,
        });
        await cancelRungCommands(tx, op.id);
        await appendEvent(tx, {
          nodeId: node.id,
          tenantId: node.tenantId,
          type: 'node.remediation.succeeded',
          actor: 'system:remediation',
          operationId: op.id,
          data: {
            attempts: input.attempts,
            ...(waitingFor.queued.length > 0 ? { queued: waitingFor.queued } : {}),
          },
        });
        succeeded = true;
        return requestNext(tx, node, finished!);
      });
      if (succeeded) metrics?.remediationEnded('succeeded');
      return progress;
    },

    /**
     * Not cleared (the ladder exhausted, two attempts ran without clearing it, a step failed), in
     * one transaction: maintenance on, `node.remediation.escalated`, the operation failed; the
     * node's next waiting condition requested.
     */
    async escalateRemediation(
      input: OperationInput & { attempts: AttemptRecord[]; reason: string },
    ): Promise<RemediationProgress> {
      let escalated = false;
      const progress = await db.transaction(async (tx) => {
        const node = await lockNode(tx, input.nodeId);
        const op = await operationOf(tx, input.operationId);
        if (op.status !== 'running') return progressOf(op) as RemediationProgress;
        const waitingFor = endedWith(op, input.attempts);
        const ended = await escalateRemediation(tx, node, op, {
          reason: input.reason,
          attempts: input.attempts,
          status: 'failed',
          queued: waitingFor.queued,
          waitingFor,
        });
        escalated = true;
        return requestNext(tx, ended.node, ended.operation);
      });
      if (escalated) metrics?.remediationEnded('escalated');
      return progress;
    },
  };
}

/** What the operation last waited for, with its attempts as they ended. */
function endedWith(op: OperationRow, attempts: AttemptRecord[]): RemediationWaitingFor {
  return { ...(op.waitingFor as RemediationWaitingFor), attempts };
}

/** After a remediation ended: the next waiting condition's remediation requested (its own operation). */
async function requestNext(tx: Tx, node: NodeRow, ended: OperationRow): Promise<RemediationProgress> {
  await requestNextRemediation(tx, node);
  return progressOf(ended) as RemediationProgress;
}
