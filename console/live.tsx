import type { Child } from 'hono/jsx';
import type { Context } from 'hono';
import type { Session } from './sessions';

/**
 * What a page watches for live updates: the event feed's filters (`GET /v1/events`): a node's
 * events, or (empty) every event the key may see.
 */
export interface Watch {
  nodeId?: string;
}

/**
 * A part of a page that updates without a reload: when the page's watch sees something new, the
 * page is read again and each region is replaced by the region of the same id in the new copy.
 * `busy`: the region shows something that moves without an event (a running operation's
 * progress): while any region of the page is busy, the page is read again every
 * `BUSY_WAIT_SECONDS` even when the feed is quiet.
 */
export function LiveRegion(props: { id: string; busy?: boolean; children?: Child }) {
  return (
    <div id={`live-${props.id}`} data-live="" data-live-busy={props.busy ? '' : undefined}>
      {props.children}
    </div>
  );
}

/** How long one live request waits on the feed while the page is quiet (the feed allows 30). */
export const QUIET_WAIT_SECONDS = 25;
/** How long it waits while the page is busy: the most a busy page's progress is behind. */
export const BUSY_WAIT_SECONDS = 3;

/** The header the live script's background re-reads of a page carry. */
export const LIVE_READ_HEADER = 'x-drydock-live';

/**
 * The session a request works with: a background re-read (live script) gets a copy, so the
 * one-time flash it renders is not taken from the session; the user's next page still shows it.
 */
export function sessionFor(c: Context, session: Session): Session {
  return c.req.header(LIVE_READ_HEADER) === undefined ? session : { ...session };
}
