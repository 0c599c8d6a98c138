import type { HttpBindings } from '@hono/node-server';
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { DrydockError } from '../domain/errors';
import type { AppEnv } from './env';
import { requireUtf8Body } from './utf8-body';

/** Largest request body accepted, however it is sent; every documented body is far smaller. */
export const MAX_BODY_BYTES = 64 * 1024;

function tooLarge(): DrydockError {
  return new DrydockError('INVALID_INPUT', `request body over ${MAX_BODY_BYTES} bytes`, {
    maxBodyBytes: MAX_BODY_BYTES,
  });
}

// Hono's bodyLimit stops pulling a body without Content-Length as soon as it passes the limit and
// keeps at most the limit in memory; its answer is a plain 413, so ours is passed in.
const streamingLimit = bodyLimit({
  maxSize: MAX_BODY_BYTES,
  onError: () => {
    throw tooLarge();
  },
});

/**
 * Refuses a body over the limit: a declared Content-Length at once, before reading (whatever the
 * method: Node would otherwise read a GET's body to discard it), a chunked one when it passes the
 * limit. A body that breaks off (client gone, request timeout) is bad input, not a server fault.
 * Then reads it, as UTF-8 (`requireUtf8Body`): one middleware for both, since each layer of the
 * app's stack costs every request its turns of promises.
 */
export const limitBody: MiddlewareHandler<AppEnv> = (c, next) => {
  const length = c.req.header('content-length');
  if (Number(length ?? 0) > MAX_BODY_BYTES) throw tooLarge();
  // GET and HEAD have no body: nothing to count or read.
  if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
  // Only a body of unknown length (chunked, or an in-process Request's stream) needs counting as
  // it arrives. Asking for the stream (`c.req.raw.body`) is not free: on @hono/node-server it
  // turns the lightweight request into a full web Request with a web stream over the socket,
  // which costs more than the rest of a small request.
  if (length !== undefined && c.req.header('transfer-encoding') === undefined) return readThen(c, next);
  return countThenRead(c, next);
};

async function readThen(c: Context<AppEnv>, next: () => Promise<void>): Promise<void> {
  await requireUtf8Body(c);
  await next();
}

async function countThenRead(c: Context<AppEnv>, next: () => Promise<void>): Promise<void> {
  let reading = true;
  try {
    await streamingLimit(c, () => {
      reading = false;
      return readThen(c, next);
    });
  } catch (error) {
    if (reading && !(error instanceof DrydockError)) {
      throw new DrydockError('INVALID_INPUT', 'the request body ended before it was complete');
    }
    throw error;
  }
}

/**
 * Closes the connection after this answer when the request's body was not read to its end and
 * may be large (chunked, or declared over the limit): otherwise the server would go on reading
 * the rest to reach the next request. Only a real socket has a connection to close.
 */
export function closeIfBodyUnread(c: Context<AppEnv>): void {
  const incoming = (c.env as Partial<HttpBindings> | undefined)?.incoming;
  if (!incoming || incoming.readableEnded) return;
  const chunked = incoming.headers['transfer-encoding'] !== undefined;
  if (chunked || Number(incoming.headers['content-length'] ?? 0) > MAX_BODY_BYTES) {
    c.header('Connection', 'close');
  }
}
