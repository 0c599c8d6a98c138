import type { WorkflowClientInterceptor } from '@temporalio/client';
import { withRequestIdHeader } from './request-id';

/**
 * Client interceptor: every workflow start, update and signal sent while a request (or an
 * activity) is in progress carries its request id in a Temporal header, which the workflow
 * interceptor (workflows/request-id-interceptor.ts) hands on to the activities.
 */
export function requestIdClientInterceptor(): WorkflowClientInterceptor {
  return {
    start: (input, next) => next({ ...input, headers: withRequestIdHeader(input.headers) }),
    startWithDetails: (input, next) => next({ ...input, headers: withRequestIdHeader(input.headers) }),
    startUpdate: (input, next) => next({ ...input, headers: withRequestIdHeader(input.headers) }),
    startUpdateWithStart: (input, next) =>
      next({
        ...input,
        workflowStartHeaders: withRequestIdHeader(input.workflowStartHeaders),
        updateHeaders: withRequestIdHeader(input.updateHeaders),
      }),
    signal: (input, next) => next({ ...input, headers: withRequestIdHeader(input.headers) }),
    signalWithStart: (input, next) => next({ ...input, headers: withRequestIdHeader(input.headers) }),
  };
}
