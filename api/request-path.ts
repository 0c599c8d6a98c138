import type { HttpBindings } from '@hono/node-server';
import type { MiddlewareHandler } from 'hono';
import { DrydockError } from '../domain/errors';
import type { AppEnv } from './env';

/** A path segment that is `.` or `..`, plainly or percent-encoded (`%2e`, `.%2E`, …). */
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;
/** A slash or backslash sent encoded, inside a segment. */
const ENCODED_SEPARATOR = /%2f|%5c/i;

/**
 * Refuses a request whose path, as the client sent it, has a dot-segment or an encoded slash:
 * the URL parser would resolve `/v1/agent/%2e%2e/keys` to `/v1/keys`, so a proxy in front that
 * allows by prefix could be walked around. No Drydock path needs either (every path parameter is
 * an id). Checked before any route runs, on the request line Node received (in process, where
 * there is none, on the URL given).
 */
export const refuseAmbiguousPath: MiddlewareHandler<AppEnv> = async (c, next) => {
  const sent = (c.env as Partial<HttpBindings> | undefined)?.incoming?.url ?? new URL(c.req.url).pathname;
  const path = sent.split('?', 1)[0]!;
  if (ENCODED_SEPARATOR.test(path) || path.split('/').some((segment) => DOT_SEGMENT.test(segment))) {
    throw new DrydockError(
      'INVALID_INPUT',
      'the request path has a dot-segment (. or ..) or an encoded slash; send the path plainly, as the API documents it',
    );
  }
  await next();
};

/**
 * Refuses a query string with a name or value whose percent-encoding is not UTF-8 (`%ED%A0%80`,
 * an encoded lone surrogate; `%FF`; a stray `%`). The router would hand such a value to a route
 * as the raw text it could not decode, where a pattern that allows `%` could take it for what
 * the client did not mean (an audit actor filter matching nothing, instead of a refusal).
 */
export const refuseUndecodableQuery: MiddlewareHandler<AppEnv> = async (c, next) => {
  const url = c.req.url;
  const at = url.indexOf('?');
  if (at >= 0 && url.includes('%', at)) {
    for (const part of url.slice(at + 1).split(/[&=]/)) {
      try {
        decodeURIComponent(part);
      } catch {
        throw new DrydockError(
          'INVALID_INPUT',
          'the query string has a name or value whose percent-encoding is not UTF-8; encode the text as UTF-8',
        );
      }
    }
  }
  await next();
};
