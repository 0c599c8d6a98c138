import type { Context } from '@temporalio/activity';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import type { Logger } from './log';
import { inLogScope, requestIdOf } from './request-id';

/**
 * Activity interceptor: an activity scheduled on behalf of a request (its headers carry the
 * request id) runs under the log scope `{ requestId, workflowId, activity }`, so every line it
 * writes through `log`, and every Temporal call it makes, names that request; it ends with one line
 * of its own, so one grep of the id finds each step of the request's workflows.
 */
export function requestIdActivityInterceptor(log: Logger): ActivityInterceptorsFactory {
  return (ctx: Context) => {
    let requestId: string | undefined;
    return {
      inbound: {
        async execute(input, next) {
          requestId = requestIdOf(input.headers);
          // Work no request asked for (the liveness sweep's timer) runs and logs without a scope.
          if (requestId === undefined) return next(input);
          const scope = {
            requestId,
            workflowId: ctx.info.workflowExecution?.workflowId,
            activity: ctx.info.activityType,
          };
          return inLogScope(scope, async () => {
            const started = performance.now();
            try {
              const result = await next(input);
              log.info({ ms: msSince(started) }, 'activity completed');
              return result;
            } catch (error) {
              // Info, not warn: a refusal is an answer the workflow expects, and Temporal's own line
              // (through the same logger, with the request id) warns of a failure it retries.
              log.info({ ms: msSince(started), err: error }, 'activity failed');
              throw error;
            }
          });
        },
      },
      outbound: {
        // Temporal's own lines about this activity (failures, retries) name the request too.
        getLogAttributes: (attributes, next) =>
          next(requestId === undefined ? attributes : { ...attributes, requestId }),
      },
    };
  };
}

/** Milliseconds since `started` (a `performance.now()`), to a tenth. */
export function msSince(started: number): number {
  return Math.round((performance.now() - started) * 10) / 10;
}
