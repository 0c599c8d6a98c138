import { context, propagation, ROOT_CONTEXT } from '@opentelemetry/api';
import type { Client } from '@temporalio/client';
import { and, asc, eq, inArray, lte, min, sql } from 'drizzle-orm';
import type { Sql } from 'postgres';
import type { Db } from '../db/client';
import { OUTBOX_CHANNEL } from '../db/outbox';
import { workflowOutbox } from '../db/schema';
import type { Logger } from '../observability/log';
import { inLogScope } from '../observability/request-id';
import {
  deliverSignal,
  deliverStart,
  startPoints,
  type Delivery,
  type OutboxRow,
  type StartPoint,
} from './deliver';

// The dispatcher: each worker runs one. It delivers the workflow outbox (db/outbox.ts) — the
// starts and wake-ups that committed changes asked for — to Temporal, and deletes what it
// delivered. Several dispatchers share the outbox: each claims rows for a lease (a claim is a
// committed update, so no lock is held while Temporal is called), and a row whose dispatcher died
// mid-delivery is delivered again once its lease ran out. Every delivery is idempotent: a start
// finds its operation begun or its own run, a wake-up only makes a workflow look again.

/** Rows delivered at once at most: a claim takes what is due up to this, less those still in flight. */
const BATCH = 200;
/** How long a claimed row is left to its dispatcher before another may take it (DRYDOCK_OUTBOX_LEASE_MS). */
const DEFAULT_LEASE_MS = 30_000;
/** The longest a dispatcher sleeps without a notification (one lost with its connection). */
const POLL_MS = 5_000;

export interface DispatcherOptions {
  db: Db;
  /** The raw driver of `db`: it holds the LISTEN connection. */
  sql: Sql;
  temporal: Client;
  taskQueue: string;
  log: Logger;
  /** How long a claimed row is this dispatcher's before another may take it (default 30 s). */
  leaseMs?: number;
  /** Crash tests only: SIGKILL this process just before, or just after, a start reaches Temporal. */
  killAt?: 'before-start' | 'after-start';
}

export interface Dispatcher {
  stop(): Promise<void>;
}

/**
 * Starts delivering the outbox: at once, on each NOTIFY, and every few seconds besides. Claims do
 * not wait for earlier claims' deliveries: rows committed while a batch is being delivered are
 * claimed and delivered beside it, up to `BATCH` rows in flight.
 */
export async function startDispatcher(options: DispatcherOptions): Promise<Dispatcher> {
  const { db, log } = options;
  let stopped = false;
  let wanted = false;
  let claiming: Promise<void> | null = null;
  const deliveries = new Set<Promise<void>>();
  let inFlight = 0;
  let timer: NodeJS.Timeout | undefined;

  const kick = (): void => {
    wanted = true;
    if (claiming || stopped || inFlight >= BATCH) return;
    claiming = claimWhileWanted()
      .catch((error: unknown) => log.warn({ err: error }, 'outbox claim failed; trying again shortly'))
      .finally(() => {
        claiming = null;
        schedule();
      });
  };

  /** Claims until nothing due is left or `BATCH` rows are in flight; each claim is delivered on its own. */
  const claimWhileWanted = async (): Promise<void> => {
    while (wanted && !stopped && inFlight < BATCH) {
      wanted = false;
      const room = BATCH - inFlight;
      const rows = await claim(options, room);
      if (rows.length === room) wanted = true;
      if (rows.length === 0) continue;
      inFlight += rows.length;
      const delivery = deliverClaimed(options, rows)
        .catch((error: unknown) => log.warn({ err: error }, 'outbox delivery failed; trying again shortly'))
        .finally(() => {
          inFlight -= rows.length;
          deliveries.delete(delivery);
          // Rows left due while the batch was full are claimed now; else the next claim is timed
          // again, for a row this delivery put off.
          if (wanted) kick();
          else if (!claiming) schedule();
        });
      deliveries.add(delivery);
    }
  };

  /** The next claim: when the earliest row waiting for a retry is due, at most `POLL_MS` away. */
  const schedule = (): void => {
    if (stopped) return;
    clearTimeout(timer);
    // A full batch in flight: its end claims again.
    if (wanted) return inFlight < BATCH ? kick() : undefined;
    void nextDue(db).then(
      (due) => {
        if (stopped || claiming) return;
        clearTimeout(timer);
        const wait = due === null ? POLL_MS : Math.min(POLL_MS, Math.max(0, due.getTime() - Date.now()));
        timer = setTimeout(kick, wait);
      },
      () => {
        clearTimeout(timer);
        timer = setTimeout(kick, POLL_MS);
      },
    );
  };

  // A (re)connected listener may have missed notifications: a claim then too.
  const listener = await options.sql.listen(OUTBOX_CHANNEL, kick, kick);
  kick();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await listener.unlisten();
      await claiming;
      await Promise.all(deliveries);
    },
  };
}

/** Claims up to `limit` rows that are due, for a lease: they are this dispatcher's until it ends. */
async function claim(options: DispatcherOptions, limit: number): Promise<OutboxRow[]> {
  const { db } = options;
  const due = db
    .select({ id: workflowOutbox.id })
    .from(workflowOutbox)
    .where(lte(workflowOutbox.nextAttemptAt, sql`now()`))
    .orderBy(asc(workflowOutbox.id))
    .limit(limit)
    .for('update', { skipLocked: true });
  return db
    .update(workflowOutbox)
    .set({
      nextAttemptAt: sql`now() + ${options.leaseMs ?? DEFAULT_LEASE_MS} * interval '1 millisecond'`,
      attempts: sql`${workflowOutbox.attempts} + 1`,
    })
    .where(inArray(workflowOutbox.id, due))
    .returning();
}

/**
 * Delivers claimed rows side by side — the operations their starts name read in one query — then
 * deletes those delivered in one statement and reschedules the rest.
 */
async function deliverClaimed(options: DispatcherOptions, claimed: OutboxRow[]): Promise<void> {
  const { db, log } = options;
  // Wake-ups of one workflow for one reason travel as one signal: it looks once either way.
  const groups = new Map<string, OutboxRow[]>();
  for (const row of claimed.sort((a, b) => a.id - b.id)) {
    const key = row.action === 'start' ? `start/${row.id}` : `signal/${row.workflowId}/${row.signal}`;
    groups.set(key, [...(groups.get(key) ?? []), row]);
  }
  const points = await startPoints(
    db,
    claimed.flatMap((row) => (row.action === 'start' ? [row.operationId!] : [])),
  );
  const settled = await Promise.all(
    [...groups.values()].map(async (rows) => {
      const row = rows[0]!;
      const delivery = await deliver(options, row, points).catch((error: unknown): Delivery => ({
        outcome: 'failed',
        error: (error as Error).message,
      }));
      return { rows, delivery };
    }),
  );
  const done = settled.flatMap(({ rows, delivery }) => (delivery.outcome === 'done' ? rows : []));
  if (done.length > 0) {
    await db.delete(workflowOutbox).where(
      inArray(
        workflowOutbox.id,
        done.map((row) => row.id),
      ),
    );
  }
  await Promise.all(
    settled.map(async ({ rows, delivery }) => {
      if (delivery.outcome === 'done') return;
      const [row] = rows as [OutboxRow];
      if (delivery.outcome === 'failed') {
        log.warn(
          { workflowId: row.workflowId, action: row.action, attempts: row.attempts, err: delivery.error },
          'outbox delivery failed; trying again',
        );
      }
      const retryInMs = backoff(delivery.outcome, row.attempts);
      await db
        .update(workflowOutbox)
        .set({
          nextAttemptAt: sql`now() + ${retryInMs} * interval '1 millisecond'`,
          lastError: delivery.error,
        })
        .where(
          and(
            inArray(
              workflowOutbox.id,
              rows.map((r) => r.id),
            ),
            eq(workflowOutbox.attempts, row.attempts),
          ),
        );
    }),
  );
}

function deliver(
  options: DispatcherOptions,
  row: OutboxRow,
  points: Map<string, StartPoint>,
): Promise<Delivery> {
  const { temporal, taskQueue, killAt } = options;
  const fault = (point: 'before-start' | 'after-start') => {
    if (point === killAt) process.kill(process.pid, 'SIGKILL');
  };
  const send = () =>
    row.action === 'start'
      ? deliverStart(temporal, taskQueue, points.get(row.operationId!), fault)
      : deliverSignal(temporal, row);
  // The request that caused the row: its id and its trace follow the call into the workflow
  // (observability/): the start or signal span is a child of the request's span.
  const traced = () =>
    row.traceparent
      ? context.with(propagation.extract(ROOT_CONTEXT, { traceparent: row.traceparent }), send)
      : send();
  return row.requestId ? inLogScope({ requestId: row.requestId }, traced) : traced();
}

/**
 * When a row is tried again: a start blocked by a closing run soon (it closes within moments);
 * a failed delivery after a backoff that doubles with its attempts, up to 30 s.
 */
function backoff(outcome: 'blocked' | 'failed', attempts: number): number {
  if (outcome === 'blocked') return Math.min(2_000, 100 * attempts);
  return Math.min(30_000, 250 * 2 ** Math.min(attempts, 7));
}

async function nextDue(db: Db): Promise<Date | null> {
  const [row] = await db.select({ due: min(workflowOutbox.nextAttemptAt) }).from(workflowOutbox);
  return row?.due ?? null;
}
