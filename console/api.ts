import type { Context } from 'hono';
import { createApiClient, type ApiClient } from '@drydock/client';

/** Sends a request into the API app in this process, with the incoming connection's bindings. */
export type InProcess = (request: Request, env: unknown) => Response | Promise<Response>;

/** How long one console call to the API may take. */
const CALL_TIMEOUT_MS = 30_000;

/**
 * The shared typed client, calling the API in-process as `key`: the API's own authentication,
 * validation, authorization and errors decide every answer. The connection's bindings go along,
 * so the API's per-address limits see the browser's address.
 */
export function apiAs(c: Context, key: string, send: InProcess): ApiClient {
  return createApiClient({
    baseUrl: new URL(c.req.url).origin,
    token: key,
    timeoutMs: CALL_TIMEOUT_MS,
    fetch: async (request) => send(request, c.env),
  });
}
