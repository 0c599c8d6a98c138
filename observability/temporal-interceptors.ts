import type { ClientInterceptors } from '@temporalio/client';
import { requestIdClientInterceptor } from './request-id-client';
import { workflowClientTracing, type Tracing } from './tracing';

/**
 * The interceptors of every Temporal client Drydock makes (the API's and the worker's, for its
 * activities): the request id, and the caller's trace when tracing is on, go into the headers.
 */
export function clientInterceptors(tracing: Tracing | null = null): ClientInterceptors {
  return { workflow: [requestIdClientInterceptor(), ...workflowClientTracing(tracing)] };
}
