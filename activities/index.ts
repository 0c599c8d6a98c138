import { ApplicationFailure } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { DrydockError } from '../domain/errors';
import { classifyDatabaseError } from '../db/errors';
import type { ClusterCa } from '../ca';
import type { Db } from '../db/client';
import type { WorkerMetrics } from '../observability/metrics';
import { silentLogger, type Logger } from '../observability/log';
import { createCancelActivities } from './cancel';
import { createDecommissionActivities } from './decommission';
import { createDrainActivities } from './drain';
import { createFailureActivities } from './failure';
import { createLivenessActivities } from './liveness';
import { createPoolDrainActivities } from './pool-drain';
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
  ca: ClusterCa;
  clusterId: string;
  temporal: Client;
  /** Unset (tests, benches that call activities directly): nothing is counted. */
  metrics?: WorkerMetrics;
  /** What lost signals are reported to (unset: nowhere; tests that call activities directly). */
  log?: Logger;
}) {
  const deps = { ...input, log: input.log ?? silentLogger() };
  return refusalsAreFinal({
    ...createCancelActivities(deps.db, deps.temporal, deps.log),
    ...createDrainActivities(deps.db, deps.metrics),
    ...createPoolDrainActivities(deps.db, deps.temporal),
    ...createLivenessActivities(deps.db, deps.metrics),
    ...createDecommissionActivities(deps.db, deps.temporal, deps.log),
    ...createPurgeActivities(deps.db, deps),
    ...createRemediationActivities(deps.db, deps.metrics),
    ...createFailureActivities(deps.db),
  });
}

export type Activities = ReturnType<typeof createActivities>;
/** The views activities answer with, named here for workflow code (which imports activity types only). */
export type { NodeView } from '../db/nodes';
export type { OperationView } from '../db/operations';

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
