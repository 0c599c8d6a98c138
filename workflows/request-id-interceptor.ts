import { defaultPayloadConverter, type Headers } from '@temporalio/common';
import { log, type WorkflowInterceptors } from '@temporalio/workflow';
import { REQUEST_ID_HEADER } from './request-id-header';

/**
 * Workflow interceptors (one set per workflow run): the request id that came with the start, an
 * update or a signal (observability/request-id-client.ts) goes on with everything the workflow
 * sends next — activities, local activities, child workflows, signals, its continuation — and on
 * its log lines. The latest request to reach the workflow names what follows: a drain's release
 * steps carry the id of the request that released its allocation, not the one that started it.
 * Headers are in the history, so a replay sees the same ids in the same order.
 */
export function interceptors(): WorkflowInterceptors {
  let requestId: string | undefined;
  const remember = (headers: Headers) => {
    const payload = headers[REQUEST_ID_HEADER];
    if (payload) requestId = defaultPayloadConverter.fromPayload<string>(payload);
  };
  const carry = (headers: Headers): Headers =>
    requestId === undefined
      ? headers
      : { ...headers, [REQUEST_ID_HEADER]: defaultPayloadConverter.toPayload(requestId) };
  return {
    inbound: [
      {
        execute: (input, next) => {
          remember(input.headers);
          // Temporal's own "Workflow started" is a debug line; this one, at info, names the request.
          if (requestId !== undefined) log.info('workflow started');
          return next(input);
        },
        handleUpdate: (input, next) => {
          remember(input.headers);
          return next(input);
        },
        handleSignal: (input, next) => {
          remember(input.headers);
          return next(input);
        },
      },
    ],
    outbound: [
      {
        scheduleActivity: (input, next) => next({ ...input, headers: carry(input.headers) }),
        scheduleLocalActivity: (input, next) => next({ ...input, headers: carry(input.headers) }),
        startChildWorkflowExecution: (input, next) => next({ ...input, headers: carry(input.headers) }),
        signalWorkflow: (input, next) => next({ ...input, headers: carry(input.headers) }),
        continueAsNew: (input, next) => next({ ...input, headers: carry(input.headers) }),
        getLogAttributes: (attributes, next) =>
          next(requestId === undefined ? attributes : { ...attributes, requestId }),
      },
    ],
  };
}
