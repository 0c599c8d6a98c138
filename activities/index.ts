import { ApplicationFailure } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { DrydockError } from '../domain/errors';
import { classifyDatabaseError } from '../db/errors';
import type { Db } from '../db/client';
import type { WorkerMetrics } from '../observability/metrics';
import { createCancelActivities } from './cancel';
import { createDecommissionActivities } from './decommission';
import { createDrainActivities } from './drain';
import { createFailureActivities } from './failure';
import { createLivenessActivities } from './liveness';
import { createMaintenanceActivities } from './maintenance';
import { createPoolDrainActivities } from './pool-drain';
import { createPoolMaintenanceActivities } from './pool-maintenance';
import { createPurgeActivities } from './purge';
import { createRemediationActivities } from './remediation';

/**
 * Every activity, bound to its dependencies. A refusal — a DrydockError, or a database error that
 * the database would refuse again (invalid text, an integrity violation) — becomes a non-retryable
 * ApplicationFailure whose `type` is the API error code; anything else (a lost connection, a
 * deadlock) retries.
 */
export function createActivities(input: {
  db: Db;
  /** The client for the few activities that ask Temporal about workflows (cancel, reconcile). */
  temporal: Client;
  /** Unset (tests, benches that call activities directly): nothing is counted. */
  metrics?: WorkerMetrics;
  /** How many days of each pool's capacity history the liveness sweep keeps (default 30). */
  capacityHistoryDays?: number;
}) {
  const { db, temporal, metrics } = input;
  return refusalsAreFinal({
    ...createCancelActivities(db, temporal),
    ...createDrainActivities(db, metrics),
    ...createPoolDrainActivities(db),
    ...createPoolMaintenanceActivities(db),
    ...createLivenessActivities(db, metrics, input.capacityHistoryDays),
    ...createDecommissionActivities(db),
    ...createPurgeActivities(db),
    ...createRemediationActivities(db, metrics),
    ...createMaintenanceActivities(db),
    ...createFailureActivities(db),
  });
}

export type Activities = ReturnType<typeof createActivities>;

function refusalsAreFinal<T extends Record<string, (...args: never[]) => Promise<unknown>>>(
  activities: T,
): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(activities)) {
    wrapped[name] = async (...args: never[]) => {
      try {
        return await fn(...args);
      } catch (error) {
        const refusal = finalRefusal(error);
        if (refusal) {
          throw ApplicationFailure.create({
            message: refusal.message,
            type: refusal.code,
            nonRetryable: true,
            // The second detail names the step for the workflow (a local activity's failure does not).
            details: [refusal.details, { activity: name }],
            // The database's own words, for whoever reads the workflow's history.
            cause: refusal === error ? undefined : (error as Error),
          });
        }
        throw error;
      }
    };
  }
  return wrapped as T;
}

/** The refusal an activity's error stands for, when a retry would only meet it again. */
function finalRefusal(error: unknown): DrydockError | null {
  if (error instanceof DrydockError) return error;
  const database = classifyDatabaseError(error);
  return database instanceof DrydockError ? database : null;
}
