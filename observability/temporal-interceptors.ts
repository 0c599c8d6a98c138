import type { ClientInterceptors } from '@temporalio/client';
import { requestIdClientInterceptor } from './request-id-client';

/** The interceptors of every Temporal client Drydock makes: the API's and the worker's (activities'). */
export function clientInterceptors(): ClientInterceptors {
  return { workflow: [requestIdClientInterceptor()] };
}
