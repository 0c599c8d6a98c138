import { AsyncLocalStorage } from 'node:async_hooks';
import { defaultPayloadConverter, type Headers } from '@temporalio/common';
import { REQUEST_ID_HEADER } from '../workflows/request-id-header';

/** What the work in progress is part of: every log line written under it carries these fields. */
export interface LogScope {
  requestId: string;
  workflowId?: string;
  activity?: string;
}

const scopes = new AsyncLocalStorage<LogScope>();

/**
 * Runs `fn` under `scope`. The request id is found again where it is needed (a log line, the
 * headers of a Temporal call) without handing it through every function in between.
 */
export function inLogScope<T>(scope: LogScope, fn: () => T): T {
  return scopes.run(scope, fn);
}

/** The scope of the request or activity in progress; none outside both. */
export function currentLogScope(): LogScope | undefined {
  return scopes.getStore();
}

/** `headers` with the request id in progress added; unchanged outside a request. */
export function withRequestIdHeader(headers: Headers): Headers {
  const requestId = scopes.getStore()?.requestId;
  if (requestId === undefined) return headers;
  return { ...headers, [REQUEST_ID_HEADER]: defaultPayloadConverter.toPayload(requestId) };
}

/** The request id a Temporal call carried in `headers`, if any. */
export function requestIdOf(headers: Headers): string | undefined {
  const payload = headers[REQUEST_ID_HEADER];
  return payload ? defaultPayloadConverter.fromPayload<string>(payload) : undefined;
}
