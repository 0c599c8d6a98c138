import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import { and, asc, eq, gt, inArray, lt, notExists, sql } from 'drizzle-orm';
import type { AttemptRecord } from '../domain/remediation';
import { OPEN_OPERATION_STATUSES } from '../domain/operation-status';
import type { Db } from '../db/client';
import { closeAbandonedOperation, endCancelledOperation, TEMPORAL_ACTOR } from '../db/cancellation';
import type { OperationStatus } from '../domain/operation';
import { controllerState, operations, workflowOutbox } from '../db/schema';
import { workflowStatus } from './workflow-status';

const EventType = proto.temporal.api.enums.v1.EventType;

/** How far back from the end of its history a clean-up looks for the cancel request (it is near the end). */
const CANCEL_REQUEST_SEARCH = 50;
/** An operation younger than this is never taken for abandoned: its workflow may still be starting. */
const ABANDONED_AFTER_MS = 30_000;
/** Operations whose workflow one reconcile pass describes, at most. */
const RECONCILE_BATCH = 20;
/** Where the reconciler left off in the running operations, so every one of them gets its turn. */
const RECONCILE_CURSOR = 'reconciler.cursor';

export interface ReconcileResult {
  /** Operations whose workflow was described. */
  checked: number;
  /** Of those, the ones closed `failed` because their workflow had closed without them. */
  closed: { operationId: string; workflowStatus: string }[];
}

export function createCancelActivities(db: Db, temporal: Client) {
  return {
    /**
     * The clean-up of a lifecycle workflow that was cancelled (DELETE /v1/operations/{id}, or a
     * cancel from the Temporal UI), in one transaction (`endCancelledOperation`): the workflow's open
     * operation ends `cancelled`, the node is put back, one event. The actor is whoever DELETE
     * recorded, else the identity on the workflow's cancel request. Idempotent under retry.
     */
    async cleanUpCancelled(input: { attempts?: AttemptRecord[] } = {}): Promise<OperationStatus | null> {
      // A workflow's clean-up: it is known by the workflow that runs it.
      const execution = Context.current().info.workflowExecution;
      if (!execution) return null;
      const [open] = await db
        .select()
        .from(operations)
        .where(
          and(
            eq(operations.workflowId, execution.workflowId),
            inArray(operations.status, OPEN_OPERATION_STATUSES),
          ),
        );
      if (!open) return null;
      const actor = open.cancellation ? open.cancellation.by : await cancelRequester(temporal, execution);
      const ended = await db.transaction((tx) =>
        endCancelledOperation(tx, open.id, {
          actor,
          ...(input.attempts ? { attempts: input.attempts } : {}),
        }),
      );
      return ended?.status ?? null;
    },

    /**
     * One reconcile pass: open operations older than `ABANDONED_AFTER_MS` whose start is no longer
     * in the outbox, a batch at a time in turn, whose workflow is closed (terminated or timed out
     * in Temporal, so it never cleaned up) are closed `failed` with `WORKFLOW_CLOSED` and their
     * node repaired (`closeAbandonedOperation`). One still waiting for its start is not looked at:
     * the dispatcher has yet to start it.
     */
    async reconcileClosedOperations(
      options: { olderThanMs?: number; batch?: number } = {},
    ): Promise<ReconcileResult> {
      const olderThan = new Date(Date.now() - (options.olderThanMs ?? ABANDONED_AFTER_MS));
      const [cursor] = await db
        .select()
        .from(controllerState)
        .where(eq(controllerState.key, RECONCILE_CURSOR));
      const batch = options.batch ?? RECONCILE_BATCH;
      const running = await db
        .select()
        .from(operations)
        .where(
          and(
            inArray(operations.status, OPEN_OPERATION_STATUSES),
            lt(operations.createdAt, olderThan),
            cursor ? gt(operations.createdAt, cursor.at) : undefined,
            notExists(
              db
                .select({ id: workflowOutbox.id })
                .from(workflowOutbox)
                .where(
                  and(eq(workflowOutbox.operationId, operations.id), eq(workflowOutbox.action, 'start')),
                ),
            ),
          ),
        )
        .orderBy(asc(operations.createdAt))
        .limit(batch);
      const result: ReconcileResult = { checked: 0, closed: [] };
      for (const op of running) {
        const status = await workflowStatus(temporal, op.workflowId);
        result.checked++;
        if (status === 'RUNNING') continue;
        const closed = await db.transaction((tx) => closeAbandonedOperation(tx, op.id, status));
        if (closed?.status === 'failed') result.closed.push({ operationId: op.id, workflowStatus: status });
      }
      // A short batch reached the end: the next pass starts from the oldest again.
      const next = running.length < batch ? new Date(0) : running.at(-1)!.createdAt;
      await db
        .insert(controllerState)
        .values({ key: RECONCILE_CURSOR, at: next })
        .onConflictDoUpdate({ target: controllerState.key, set: { at: sql`excluded.at` } });
      return result;
    },
  };
}

/**
 * Who asked Temporal to cancel this run: the identity on its `WorkflowExecutionCancelRequested`
 * event (the Web UI's user, or the client's `pid@host`), read from the end of its history.
 */
export async function cancelRequester(
  temporal: Client,
  execution: { workflowId: string; runId: string },
): Promise<string> {
  const { history } = await temporal.workflowService.getWorkflowExecutionHistoryReverse({
    namespace: temporal.options.namespace,
    execution,
    maximumPageSize: CANCEL_REQUEST_SEARCH,
  });
  const requested = history?.events?.find(
    (e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED,
  );
  const identity = requested?.workflowExecutionCancelRequestedEventAttributes?.identity;
  return identity ? `${TEMPORAL_ACTOR}:${identity}` : TEMPORAL_ACTOR;
}
