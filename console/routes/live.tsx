import { Hono } from 'hono';
import type { ApiClient } from '@drydock/client';
import type { ErrorCode } from '../../domain/errors';
import { idPattern } from '../../domain/ids';
import type { ConsoleEnv } from '../context';
import { BUSY_WAIT_SECONDS, QUIET_WAIT_SECONDS } from '../live';

/** A feed cursor: an event id the feed handed out, or 0. */
const CURSOR = /^\d{1,15}$/;

/** What `GET /console/live` answers. */
export interface LiveAnswer {
  /** The cursor to ask from next time. */
  after: string;
  /** Whether an event the page watches came after the cursor asked from. */
  changed: boolean;
}

/**
 * The endpoint live pages loop on (console/assets/live.js): `GET /console/live?nodeId=&after=&busy=`
 * long-polls the event feed as the signed-in key and says whether anything the page watches
 * happened after `after`. It waits `QUIET_WAIT_SECONDS` for an event, or `BUSY_WAIT_SECONDS` with
 * `busy=1` (the page shows progress that moves without events, so it is read again that often).
 * Without `after` it answers at once with the feed's cursor of now.
 */
export function liveRoutes(): Hono<ConsoleEnv> {
  const router = new Hono<ConsoleEnv>();

  router.get('/live', async (c) => {
    const nodeId = c.req.query('nodeId') || undefined;
    const after = c.req.query('after');
    const busy = c.req.query('busy');
    const problem =
      nodeId !== undefined && !idPattern('node').test(nodeId)
        ? 'nodeId is not a node id'
        : after !== undefined && !CURSOR.test(after)
          ? 'after is an event id: the cursor this endpoint handed out'
          : busy !== undefined && busy !== '0' && busy !== '1'
            ? 'busy is 0 or 1'
            : undefined;
    if (problem)
      return c.json(
        {
          error: {
            code: 'INVALID_INPUT' satisfies ErrorCode,
            message: problem,
            details: {},
            requestId: c.var.requestId,
          },
        },
        400,
      );
    if (after === undefined) {
      return c.json<LiveAnswer>({ after: await cursorNow(c.var.api, nodeId), changed: false });
    }
    const page = await c.var.api.GET('/v1/events', {
      params: {
        query: { after, nodeId, limit: 200, wait: busy === '1' ? BUSY_WAIT_SECONDS : QUIET_WAIT_SECONDS },
      },
      // A page closed or left ends its wait on the feed too.
      signal: c.req.raw.signal,
    });
    return c.json<LiveAnswer>({ after: page.nextCursor, changed: page.items.length > 0 });
  });

  return router;
}

/** The feed's cursor of this moment, for `nodeId`'s events (or all the key sees). */
async function cursorNow(api: ApiClient, nodeId: string | undefined): Promise<string> {
  const page = await api.GET('/v1/events', {
    params: { query: { nodeId, limit: 0 } },
  });
  return page.nextCursor;
}
