import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { DrydockError } from '../domain/errors';
import type { AppEnv } from './env';
import { requireUtf8Body } from './utf8-body';

/** Largest request body accepted, however it is sent; every documented body is far smaller. */
export const MAX_BODY_BYTES = 64 * 1024;

/**
 * The one body allowed to be larger: a `run` command's result, with up to 1 MiB of output in
 * base64 (4 characters for 3 bytes).
 */
export const RESULT_BODY_BYTES = 2 * 1024 * 1024;
const RESULT_PATH = /^\/v1\/agent\/commands\/[^/]+\/result$/;

/** The largest body the request's path takes. */
export function maxBodyBytesOf(path: string): number {
  return RESULT_PATH.test(path) ? RESULT_BODY_BYTES : MAX_BODY_BYTES;
}

/** How long the connection of a refused body stays open after the answer: the client's moment to read it. */
export const LINGER_MS = 1_000;

function tooLarge(max: number): DrydockError {
  return new DrydockError('PAYLOAD_TOO_LARGE', `request body over ${max} bytes`, { maxBodyBytes: max });
}

// Hono's bodyLimit stops pulling a body without Content-Length as soon as it passes the limit and
// keeps at most the limit in memory; its answer is a plain 413, so ours is passed in.
const streamingLimits = new Map(
  [MAX_BODY_BYTES, RESULT_BODY_BYTES].map((max) => [
    max,
    bodyLimit({
      maxSize: max,
      onError: (c) => {
        throw refuseUnread(c, max);
      },
    }),
  ]),
);

/**
 * Refuses a body over the limit: a declared Content-Length at once, before reading (whatever the
 * method: Node would otherwise read a GET's body to discard it), one of unknown length (chunked,
 * or an in-process Request's stream) when it passes the limit, counted by hono's `bodyLimit`. A
 * refused body is not read to its end, so its connection closes after the answer. A body that
 * breaks off (client gone, request timeout) is bad input, not a server fault. Then reads it once,
 * as UTF-8 (`requireUtf8Body`), before any route parses it.
 */
export const limitBody: MiddlewareHandler<AppEnv> = async (c, next) => {
  const max = maxBodyBytesOf(c.req.path);
  const length = c.req.header('content-length');
  const unknownLength = length === undefined || c.req.header('transfer-encoding') !== undefined;
  if (Number(length ?? 0) > max) throw refuseUnread(c, max);
  if (c.req.method === 'GET' || c.req.method === 'HEAD') {
    // Fetch gives them no body; one of unknown length is left unread, and so is the connection.
    if (c.req.header('transfer-encoding') !== undefined) c.header('Connection', 'close');
    return next();
  }
  // A declared length is all Node's parser hands over: only a body of unknown length is counted.
  if (!unknownLength) {
    await read(c);
    return next();
  }
  let reading = true;
  try {
    await streamingLimits.get(max)!(c, async () => {
      reading = false;
      await read(c);
    });
  } catch (error) {
    if (reading && !(error instanceof DrydockError)) throw endedEarly();
    throw error;
  }
  await next();
};

async function read(c: Context<AppEnv>): Promise<void> {
  try {
    await requireUtf8Body(c);
  } catch (error) {
    throw error instanceof DrydockError ? error : endedEarly();
  }
}

function endedEarly(): DrydockError {
  return new DrydockError('INVALID_INPUT', 'the request body ended before it was complete');
}

/**
 * The refusal of a body over the limit, whose rest is never read: the connection closes after the
 * answer (`lingerAfterRefusal`), or the server would go on reading the rest to reach the next request.
 */
function refuseUnread(c: Context, max: number): DrydockError {
  c.header('Connection', 'close');
  return tooLarge(max);
}

/**
 * Holds the connection of a refused body open a moment after the answer's last byte. The rest of
 * the body is never read, so closing at once would leave the client's bytes unread on the server,
 * whose TCP stack then resets the connection: a client still sending meets the reset (EPIPE) before
 * it reads the answer. So the answer goes out whole at once, with its length, and only its end,
 * after which Node closes the connection (`Connection: close`), waits `LINGER_MS`; meanwhile the
 * server reads nothing more, and a client that read the answer and hung up ends the wait. Called by
 * the app's first middleware for a PAYLOAD_TOO_LARGE answer; in process there is no connection.
 */
export async function lingerAfterRefusal(c: Context<AppEnv>): Promise<void> {
  if (!c.env) return;
  const body = new Uint8Array(await c.res.arrayBuffer());
  let timer: NodeJS.Timeout | undefined;
  const lingering = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(body);
      timer = setTimeout(() => controller.close(), LINGER_MS);
    },
    cancel: () => clearTimeout(timer),
  });
  const headers = new Headers(c.res.headers);
  headers.set('Content-Length', String(body.byteLength));
  c.res = new Response(lingering, { status: c.res.status, headers });
}
