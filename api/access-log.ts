import type { Context } from 'hono';
import type { Principal } from '../domain/principal';
import type { Logger } from '../observability/log';
import { msSince } from '../observability/request-id-activity';
import type { AppEnv } from './env';

/**
 * The access log: one line per request once its answer is ready (a long-poll's or a stream's
 * `ms` is the time to its headers). The route pattern (`routePath`), not the path, so lines group by route and
 * no query string (which may hold anything) is written; the principal by id, never its secret.
 * A 5xx is an error line, anything else info: a 4xx is the caller's mistake or a refusal the API
 * is meant to give — the server is well, and an alert on error lines should fire for its faults only.
 */
export function logAccess(log: Logger, c: Context<AppEnv>, route: string, started: number): void {
  const status = c.res.status;
  const line = {
    method: c.req.method,
    route,
    status,
    ms: msSince(started),
    requestId: c.get('requestId'),
    principal: principalId(c.get('principal')),
  };
  if (status >= 500) log.error(line, 'request');
  else log.info(line, 'request');
}

/** What authenticated the request: the API key's id (`bootstrap` for the bootstrap key) or the node's. */
function principalId(principal: Principal | undefined): string | undefined {
  if (!principal) return undefined;
  return principal.kind === 'node' ? principal.nodeId : principal.keyId;
}
