import { eq } from 'drizzle-orm';
import { uncordon } from '../domain/controls';
import { deadlineOf, parseDeadline } from '../domain/deadline';
import { spokenDuration } from '../domain/duration';
import { DrydockError } from '../domain/errors';
import {
  REBOOT_ACTION,
  stepPhase,
  stepText,
  type MaintenancePlan,
  type MaintenanceStep,
} from '../domain/maintenance';
import type { MaintenanceWaitingFor, StepRecord } from '../domain/maintenance-progress';
import { isFinished } from '../domain/operation';
import { DRAIN_MAX_SLEEP_MS, type MaintenanceProgress } from '../domain/progress';
import { derivedUlid } from '../domain/ulid';
import type { Db, Tx } from '../db/client';
import { classifyDatabaseError } from '../db/errors';
import { queueRunCommand } from '../db/commands';
import { appendEvent } from '../db/events';
import { applyNodeChange, lockNode, type NodeRow } from '../db/nodes';
import { finishOperation, recordProgress, type OperationRow } from '../db/operations';
import { labelsOf } from '../db/queries/nodes';
import { progressOf } from '../db/queries/operations';
import { requestDrain } from '../db/requests/drain';
import { nodeCommands, operations } from '../db/schema';
import { failMaintenance } from '../db/maintenance';
import { beginOperationRun } from './begin';

/** How long a command of a maintenance step may wait for its node before it expires. */
const STEP_COMMAND_EXPIRY_MS = 60 * 60_000;

/** Where the current step stands after a look: done, failed (why), or waiting (until when at the latest). */
type StepState =
  | { state: 'done' }
  | { state: 'failed'; reason: string }
  | { state: 'waiting'; until: number | null; waitingFor?: Partial<MaintenanceWaitingFor> };

export function createMaintenanceActivities(db: Db) {
  return {
    /**
     * One look at a node's maintenance (docs/lifecycle/maintenance.md), one transaction with the node
     * locked: the current step is begun when it has not been (its drain requested, its command
     * queued, the node uncordoned), or looked at; a step that is done moves the record to the next
     * (`node.maintenance.step-ended`), and the look goes on with it in the same transaction; the last
     * done ends the maintenance `succeeded`; a failed step ends it `failed` with the node in
     * maintenance. Every effect is found again by a look that runs twice (derived ids, the record).
     */
    async lookAtMaintenance(input: { operationId: string; nodeId: string }): Promise<MaintenanceProgress> {
      return db.transaction(async (tx) => {
        let node = await lockNode(tx, input.nodeId);
        const first = await tx
          .select()
          .from(operations)
          .where(eq(operations.id, input.operationId))
          .for('update');
        const plan = (first[0]?.result as { plan?: MaintenancePlan } | null)?.plan;
        let op = await beginOperationRun(
          tx,
          input.operationId,
          plan?.steps[0] ? stepPhase(plan.steps[0]) : 'running',
        );
        if (op.status !== 'running' || !plan) return progressOf(op) as MaintenanceProgress;
        let w = op.waitingFor as MaintenanceWaitingFor;
        const now = Date.now();
        for (;;) {
          const step = plan.steps[w.step];
          if (!step) {
            const ended = await finishOperation(tx, op.id, 'succeeded', { waitingFor: w });
            await appendEvent(tx, {
              nodeId: node.id,
              tenantId: node.tenantId,
              type: 'node.maintenance.succeeded',
              actor: 'system:maintenance',
              reason: op.reason,
              operationId: op.id,
              data: { steps: plan.steps.map(stepText) },
            });
            return progressOf(ended!) as MaintenanceProgress;
          }
          if (w.steps[w.step]!.startedAt === null) {
            const begun = await beginStep(tx, node, op, plan, step, w, now);
            w = begun.waitingFor;
            node = begun.node;
          }
          const looked = await lookAtStep(tx, node, op, plan, step, w, now);
          if (looked.state === 'waiting') {
            w = { ...w, ...looked.waitingFor };
            const recorded = await recordProgress(tx, op.id, {
              phase: stepPhase(step),
              waitingFor: w,
              nextCheckAt: new Date(looked.until ?? now + DRAIN_MAX_SLEEP_MS),
            });
            return progressOf(recorded!) as MaintenanceProgress;
          }
          const record: StepRecord = {
            ...w.steps[w.step]!,
            outcome: looked.state === 'done' ? 'done' : 'failed',
            endedAt: new Date(now).toISOString(),
            ...(looked.state === 'failed' ? { reason: looked.reason } : {}),
          };
          await appendEvent(tx, {
            nodeId: node.id,
            tenantId: node.tenantId,
            type: 'node.maintenance.step-ended',
            actor: 'system:maintenance',
            reason: op.reason,
            operationId: op.id,
            data: {
              index: w.step,
              step: record.step,
              outcome: record.outcome as 'done' | 'failed',
              ...(record.reason ? { reason: record.reason } : {}),
              ...(record.commandId ? { commandId: record.commandId } : {}),
              ...(record.operationId ? { operationId: record.operationId } : {}),
            },
          });
          const steps = w.steps.map((s, i) => (i === w.step ? record : s));
          if (looked.state === 'failed') {
            const failed = await failMaintenance(tx, node, op, { ...w, steps }, looked.reason);
            return progressOf(failed) as MaintenanceProgress;
          }
          w = { ...w, step: w.step + 1, steps, stepDeadline: null };
          const recorded = await recordProgress(tx, op.id, {
            phase: plan.steps[w.step] ? stepPhase(plan.steps[w.step]!) : stepPhase(step),
            waitingFor: w,
            nextCheckAt: null,
          });
          op = recorded!;
        }
      });
    },
  };
}

/** A step's effect, under a savepoint: what it made, or the refusal's words (nothing of it stays). */
async function refusedOr<T>(tx: Tx, effect: (savepoint: Tx) => Promise<T>): Promise<T | { refused: string }> {
  try {
    return await tx.transaction(effect);
  } catch (error) {
    const refusal = error instanceof DrydockError ? error : classifyDatabaseError(error);
    if (!(refusal instanceof DrydockError)) throw error;
    return { refused: refusal.message };
  }
}

/** The id of what step `index` of maintenance `op` makes: found again by a look that runs twice. */
const stepEffectId = (op: OperationRow, index: number, prefix: 'op' | 'cmd') =>
  `${prefix}_${derivedUlid(op.id.slice('op_'.length), `${index}`)}`;

/** Queues a step's command (its id derived from the step): its id, or why it was refused. */
function queueStepCommand(tx: Tx, node: NodeRow, op: OperationRow, index: number, action: string, args = {}) {
  return refusedOr(tx, (savepoint) =>
    queueRunCommand(savepoint, node, {
      id: stepEffectId(op, index, 'cmd'),
      action,
      args,
      reason: op.reason,
      requestedBy: op.actor,
      expiresInMs: STEP_COMMAND_EXPIRY_MS,
      operationId: op.id,
    }),
  );
}

/**
 * Begins a step, under the node's lock: a drain requested (as a child of the maintenance, its id
 * derived from the maintenance's and the step's), a command queued (its id derived the same way),
 * the node uncordoned. A refusal of the drain or the command ends the step failed on this look.
 */
async function beginStep(
  tx: Tx,
  node: NodeRow,
  op: OperationRow,
  plan: MaintenancePlan,
  step: MaintenanceStep,
  w: MaintenanceWaitingFor,
  now: number,
): Promise<{ waitingFor: MaintenanceWaitingFor; node: NodeRow }> {
  const startedAt = new Date(now).toISOString();
  let record: StepRecord = { ...w.steps[w.step]!, startedAt };
  let extra: Partial<MaintenanceWaitingFor> = {};
  let current = node;
  switch (step.kind) {
    case 'drain': {
      const parsed = step.deadline ? parseDeadline(step.deadline, now) : null;
      const deadline = parsed && 'deadline' in parsed ? deadlineOf(parsed.deadline, now) : null;
      const drained = await refusedOr(tx, (savepoint) =>
        requestDrain(savepoint, node.id, {
          actor: op.actor,
          reason: op.reason,
          deadline,
          operationId: stepEffectId(op, w.step, 'op'),
          parentOperationId: op.id,
        }),
      );
      if ('refused' in drained) record = { ...record, reason: drained.refused };
      else {
        record = { ...record, operationId: drained.operation.id };
        current = drained.node;
      }
      break;
    }
    case 'run':
    case 'reboot':
    case 'verify': {
      const action = step.kind === 'run' ? step.action : step.kind === 'reboot' ? REBOOT_ACTION : step.action;
      if (step.kind === 'reboot') {
        extra = {
          bootIdBefore: node.bootId,
          stepDeadline: new Date(now + plan.rebootTimeoutMs).toISOString(),
        };
      }
      if (step.kind === 'verify') {
        extra = {
          stepDeadline: new Date(now + plan.verifyTimeoutMs).toISOString(),
          healthySince: null,
          failing: [],
        };
      }
      // A verify's action runs once the probes held (lookAtStep queues it).
      if (!action || step.kind === 'verify') break;
      const command = await queueStepCommand(
        tx,
        node,
        op,
        w.step,
        action,
        step.kind === 'run' ? step.args : {},
      );
      record =
        'refused' in command ? { ...record, reason: command.refused } : { ...record, commandId: command.id };
      break;
    }
    case 'uncordon': {
      const change = uncordon({ ...node, labels: await labelsOf(tx, node.id) });
      if (change)
        current = await applyNodeChange(tx, node, change, {
          actor: op.actor,
          reason: op.reason,
          operationId: op.id,
        });
      break;
    }
  }
  const steps = w.steps.map((s, i) => (i === w.step ? record : s));
  return { waitingFor: { ...w, ...extra, steps }, node: current };
}

/** Where the current step stands. */
async function lookAtStep(
  tx: Tx,
  node: NodeRow,
  op: OperationRow,
  plan: MaintenancePlan,
  step: MaintenanceStep,
  w: MaintenanceWaitingFor,
  now: number,
): Promise<StepState> {
  const record = w.steps[w.step]!;
  if (record.reason) return { state: 'failed', reason: record.reason };
  switch (step.kind) {
    case 'drain': {
      const [drain] = await tx.select().from(operations).where(eq(operations.id, record.operationId!));
      if (!drain || !isFinished(drain.status)) return { state: 'waiting', until: null };
      if (drain.status === 'succeeded') return { state: 'done' };
      const why = (drain.error as { message?: string; reason?: string } | null) ?? {};
      return {
        state: 'failed',
        reason: `drain ${drain.id} ${drain.status}${why.reason || why.message ? `: ${why.reason ?? why.message}` : ''}`,
      };
    }
    case 'run':
      return commandState(tx, record.commandId!, null);
    case 'reboot': {
      const deadline = Date.parse(w.stepDeadline!);
      // Back on a new boot: the reboot happened, whatever its command says yet (`returned` comes next).
      if (node.bootId !== null && node.bootId !== w.bootIdBefore && node.connectivity === 'connected') {
        return { state: 'done' };
      }
      const command = await commandState(tx, record.commandId!, deadline);
      if (command.state === 'failed') return command;
      if (now >= deadline) {
        return {
          state: 'failed',
          reason: `the node did not come back on a new boot within ${spokenDuration(plan.rebootTimeoutMs)} (boot id still ${w.bootIdBefore ?? 'not reported'})`,
        };
      }
      return { state: 'waiting', until: deadline };
    }
    case 'verify':
      return verifyState(tx, node, op, plan, step, w, now);
    case 'uncordon':
      return { state: 'done' };
  }
}

/** A step's command: done once it succeeded; failed when it ended otherwise; else waiting. */
async function commandState(tx: Tx, commandId: string, until: number | null): Promise<StepState> {
  const [command] = await tx.select().from(nodeCommands).where(eq(nodeCommands.id, commandId));
  if (!command) return { state: 'failed', reason: `command ${commandId} is gone` };
  switch (command.status) {
    case 'succeeded':
      return { state: 'done' };
    case 'pending':
    case 'running':
      return { state: 'waiting', until };
    case 'returned':
      // A restarting action comes back `returned`: the reboot step judges by the boot id.
      if (command.action === REBOOT_ACTION) return { state: 'waiting', until };
      return {
        state: 'failed',
        reason: `${command.action} ${command.status}: ${command.refuseReason ?? ''}`.trim(),
      };
    default:
      return {
        state: 'failed',
        reason: `${command.action} ${command.status}${command.exitCode !== null ? ` (exit ${command.exitCode})` : ''}${command.refuseReason ? `: ${command.refuseReason}` : ''} (command ${command.id})`,
      };
  }
}

/**
 * A verify step: every probe (condition) of the node false, the node connected, for
 * `healthyAfter` on end; then its action, if it names one, must succeed. Past the step's deadline
 * with a probe still failing, it fails naming the probes and their reasons.
 */
async function verifyState(
  tx: Tx,
  node: NodeRow,
  op: OperationRow,
  plan: MaintenancePlan,
  step: Extract<MaintenanceStep, { kind: 'verify' }>,
  w: MaintenanceWaitingFor,
  now: number,
): Promise<StepState> {
  const record = w.steps[w.step]!;
  if (record.commandId) return commandState(tx, record.commandId, null);
  const deadline = Date.parse(w.stepDeadline!);
  const failing = node.conditions
    .filter((c) => c.status)
    .map((c) => ({ type: c.type, reason: c.reason, since: c.since }));
  const connected = node.connectivity === 'connected' && node.liveness === 'alive';
  if (failing.length > 0 || !connected) {
    if (now >= deadline) {
      const what =
        failing.length > 0
          ? failing.map((f) => `probe ${f.type} failing${f.reason ? `: ${f.reason}` : ''}`).join('; ')
          : `the node is ${node.connectivity}, ${node.liveness}`;
      return {
        state: 'failed',
        reason: `not healthy within ${spokenDuration(plan.verifyTimeoutMs)}: ${what}`,
      };
    }
    return { state: 'waiting', until: deadline, waitingFor: { healthySince: null, failing } };
  }
  const changes = node.conditions.map((c) => Date.parse(c.since)).filter(Number.isFinite);
  const healthySince = Math.max(Date.parse(record.startedAt!), ...changes);
  const heldUntil = healthySince + plan.healthyAfterMs;
  const since = { healthySince: new Date(healthySince).toISOString(), failing: [] };
  if (now < heldUntil) return { state: 'waiting', until: heldUntil, waitingFor: since };
  if (!step.action) return { state: 'done' };
  // The probes held: the verify's action runs now, once (its id derived like any step's).
  const command = await queueStepCommand(tx, node, op, w.step, step.action);
  if ('refused' in command) return { state: 'failed', reason: command.refused };
  const id = command.id;
  const steps = w.steps.map((s, i) => (i === w.step ? { ...s, commandId: id } : s));
  await tx
    .update(operations)
    .set({ waitingFor: { ...w, ...since, steps } })
    .where(eq(operations.id, op.id));
  return { state: 'waiting', until: null, waitingFor: { ...since, steps } };
}
