import type { Child } from 'hono/jsx';

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
 */
export function LiveRegion(props: { id: string; children?: Child }) {
  return (
    <div id={`live-${props.id}`} data-live="">
      {props.children}
    </div>
  );
}
