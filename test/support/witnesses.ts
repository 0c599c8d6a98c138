import type { Client } from '@temporalio/client';
import type { NodeWakeups } from '../../api/node-events';
import { eventually } from './harness';

/**
 * Witnesses: things a test waits on to know the system has looked, before it asserts that
 * something did not happen (or before it does what must find the system waiting).
 */

/** Resolves once a long-poll of the node waits for its wake-up in this API process. */
export function longPollWaiting(wakeups: NodeWakeups, nodeId: string): Promise<true> {
  return eventually(async () => wakeups.waiting(nodeId) > 0);
}

/** Which requests to count: each field left out matches any. */
export interface RequestKind {
  method?: string;
  route?: string;
  status?: number;
}

/** How many requests of a kind an API server has answered, by its `/metrics`. */
export async function answered(api: string, request: RequestKind): Promise<number> {
  const text = await (await fetch(`${api}/metrics`)).text();
  let total = 0;
  for (const line of text.split('\n')) {
    // The latency histogram's `_count` is the number of requests answered.
    const match =
      /^drydock_http_request_duration_seconds_count\{method="(\w+)",route="([^"]*)",status="(\d+)"\} (\d+)$/.exec(
        line,
      );
    if (!match) continue;
    const [, method, route, status, count] = match;
    if (request.method !== undefined && method !== request.method) continue;
    if (request.route !== undefined && route !== request.route) continue;
    if (request.status !== undefined && Number(status) !== request.status) continue;
    total += Number(count);
  }
  return total;
}

/** Resolves once the server has answered `more` requests of the kind beyond `since`. */
export async function answeredMore(
  api: string,
  request: RequestKind,
  since: number,
  more: number,
  timeoutMs = 10_000,
): Promise<void> {
  await eventually(async () => (await answered(api, request)) >= since + more, timeoutMs, 100);
}

/**
 * Signals the workflow and resolves once it has acted on the signal: a step (a local activity)
 * completed after it, so the workflow looked at the database again.
 */
export async function signalAndAwaitStep(client: Client, workflowId: string, signal: string): Promise<void> {
  const handle = client.workflow.getHandle(workflowId);
  const signalled = async () => {
    const events = (await handle.fetchHistory()).events ?? [];
    const at = events.flatMap((e, i) =>
      e.workflowExecutionSignaledEventAttributes?.signalName === signal ? [i] : [],
    );
    return { events, at };
  };
  const before = (await signalled()).at.length;
  await handle.signal(signal);
  await eventually(async () => {
    const { events, at } = await signalled();
    // Ours is the first after those seen before (one sent meanwhile would only be a later look).
    const ours = at[before];
    return ours !== undefined && events.slice(ours + 1).some((e) => e.markerRecordedEventAttributes);
  });
}
