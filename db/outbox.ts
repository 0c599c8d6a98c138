import { context, propagation } from '@opentelemetry/api';
import { sql } from 'drizzle-orm';
import { WAKE_SIGNAL } from '../domain/operation';
import { currentLogScope } from '../observability/request-id';
import type { Tx } from './client';
import { workflowOutbox } from './schema';

/** The Postgres channel on which a transaction says it wrote to the workflow outbox. */
export const OUTBOX_CHANNEL = 'drydock_outbox';

// Every call to Temporal that a change needs goes through here, in the change's own transaction:
// it is delivered once the change committed, by a worker's dispatcher, however long Temporal is
// away — and never if the change rolled back. Nothing waits for Temporal inside a request. An
// operation ended from outside its workflow (a DELETE, an uncordon) is ended in the database and
// its workflow woken: it finds its record finished and ends, so no cancel needs sending.

/** Asks for the workflow of an operation just recorded `pending` to be started. */
export function enqueueStart(tx: Tx, operation: { id: string; workflowId: string }): Promise<void> {
  return enqueue(tx, { action: 'start', workflowId: operation.workflowId, operationId: operation.id });
}

/**
 * Asks for the workflow to look at its record again (a release, an uncordon, a freed budget slot,
 * a node's answer): `why` is the signal's argument, shown in the Temporal UI. A workflow that does
 * not run ignores it; its next look sees the change anyway.
 */
export function enqueueWake(tx: Tx, workflowId: string, why: string): Promise<void> {
  return enqueue(tx, { action: 'signal', workflowId, signal: WAKE_SIGNAL, reason: why });
}

async function enqueue(tx: Tx, row: typeof workflowOutbox.$inferInsert): Promise<void> {
  // What the request's trace is (nothing when tracing is off): the delivery continues it.
  const carrier: { traceparent?: string } = {};
  propagation.inject(context.active(), carrier);
  await tx.insert(workflowOutbox).values({
    ...row,
    requestId: currentLogScope()?.requestId ?? null,
    traceparent: carrier.traceparent ?? null,
  });
  await tx.execute(sql`select pg_notify(${OUTBOX_CHANNEL}, '')`);
}

/**
 * Withdraws the start of an operation not yet dispatched; true when there was one (the workflow
 * never started, so whatever ends the operation needs no workflow to be told).
 */
export async function withdrawStart(tx: Tx, operationId: string): Promise<boolean> {
  const rows = await tx
    .delete(workflowOutbox)
    .where(sql`${workflowOutbox.operationId} = ${operationId} and ${workflowOutbox.action} = 'start'`)
    .returning({ id: workflowOutbox.id });
  return rows.length > 0;
}
