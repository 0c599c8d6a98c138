import { ApplicationFailure } from '@temporalio/activity';
import { DrydockError } from '../domain/errors';
import type { ClusterCa } from '../ca';
import type { Db } from '../db/client';
import { createDecommissionActivities } from './decommission';
import { createDrainActivities } from './drain';
import { createLivenessActivities } from './liveness';
import { createPurgeActivities } from './purge';
import { createRemediationActivities } from './remediation';

/**
 * Every activity, bound to its dependencies. A refusal (DrydockError) becomes a non-retryable
 * ApplicationFailure whose `type` is the API error code; anything else retries.
 */
export function createActivities(deps: { db: Db; ca: ClusterCa; clusterId: string }) {
  return refusalsAreFinal({
    ...createDrainActivities(deps.db),
    ...createLivenessActivities(deps.db),
    ...createDecommissionActivities(deps.db),
    ...createPurgeActivities(deps.db, { ca: deps.ca, clusterId: deps.clusterId }),
    ...createRemediationActivities(deps.db),
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
        if (error instanceof DrydockError) {
          throw ApplicationFailure.create({
            message: error.message,
            type: error.code,
            nonRetryable: true,
            details: [error.details],
          });
        }
        throw error;
      }
    };
  }
  return wrapped as T;
}
