import {
  allHandlersFinished,
  condition,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { UpdateDefinition } from '@temporalio/common';
import { ulidFrom } from '../domain/ulid';
import type { BeginInput, BeginRequest, OperationBegun } from './definitions';
import { asRefusal } from './refusal';
import { OperationIdKey } from './search-attributes';

/** How long a started workflow waits for its `begin` update before it ends itself. */
const BEGIN_TIMEOUT = '1 minute';

/**
 * Serves a lifecycle workflow's `begin` update (docs/architecture.md, rule 4) and waits for the
 * first one. Each begin creates its operation under the id of `beginOperationId`, so a begin activity run
 * again (a retried workflow task, a re-sent update) finds its own operation.
 * Resolves to the first begin's answer, or to why there is none.
 */
export function awaitBegin<R extends BeginRequest, A extends OperationBegun>(
  update: UpdateDefinition<A, [R]>,
  nodeId: string,
  begin: (input: BeginInput<R>) => Promise<A>,
  own?: R,
): Promise<{ begun: A } | { begun: null; outcome: 'refused' | 'never-began' }> {
  return awaitBeginOf(update, (request) => begin(beginInput(request, nodeId)), own);
}

/**
 * `awaitBegin` for a workflow that is not a node's (a pool's): `begin` makes the activity's input.
 * `own`: a begin the workflow makes itself at once (a remediation's next queued condition), served
 * as a request would be; a begin from the API may still come first.
 */
export async function awaitBeginOf<R extends BeginRequest, A extends OperationBegun>(
  update: UpdateDefinition<A, [R]>,
  begin: (request: R) => Promise<A>,
  own?: R,
): Promise<{ begun: A } | { begun: null; outcome: 'refused' | 'never-began' }> {
  const state: { first: A | null; refused: boolean } = { first: null, refused: false };
  const serve = serveBeginOf(update, begin, {
    answered(result) {
      if (state.first !== null) return;
      state.first = result;
      upsertSearchAttributes([{ key: OperationIdKey, value: result.operation.id }]);
    },
    refused() {
      state.refused = state.first === null;
    },
  });
  // Its refusal is `state.refused`, as a request's would be; there is no caller to answer.
  if (own) void serve(own).catch(() => undefined);
  setCurrentDetails('starting: waiting for the begin request');
  const arrived = await condition(() => state.first !== null || state.refused, BEGIN_TIMEOUT);
  await condition(allHandlersFinished);
  if (state.first !== null) return { begun: state.first };
  return { begun: null, outcome: arrived ? 'refused' : 'never-began' };
}

/**
 * Serves the `begin` update of a run that continued as new once it had begun: a begin re-sent into
 * it, or another one, is answered as the first run answered it (the begin activity finds the
 * operation by the id the API minted, by its Idempotency-Key, or as the node's open one).
 */
export function serveBegin<R extends BeginRequest, A extends OperationBegun>(
  update: UpdateDefinition<A, [R]>,
  nodeId: string,
  begin: (input: BeginInput<R>) => Promise<A>,
): void {
  serveBeginOf(update, (request) => begin(beginInput(request, nodeId)));
}

/**
 * The `begin` handler: runs the begin for each request; a refusal goes back as the begin's own
 * failure. Returns the handler, for a begin the workflow makes itself.
 */
function serveBeginOf<R extends BeginRequest, A extends OperationBegun>(
  update: UpdateDefinition<A, [R]>,
  begin: (request: R) => Promise<A>,
  seen?: { answered: (result: A) => void; refused: () => void },
): (request: R) => Promise<A> {
  const serve = async (request: R) => {
    try {
      const result = await begin(request);
      seen?.answered(result);
      return result;
    } catch (error) {
      seen?.refused();
      throw asRefusal(error);
    }
  };
  setHandler(update, serve);
  return serve;
}

/** What a begin activity gets for a request: the node, this workflow, and the operation's id. */
export function beginInput<R extends BeginRequest>(request: R, nodeId: string): BeginInput<R> {
  return {
    ...request,
    nodeId,
    workflowId: workflowInfo().workflowId,
    operationId: beginOperationId(request),
  };
}

/**
 * The id of the operation a begin creates, minted by the API into the request: the client re-sends
 * an update-with-start whose answer it missed, and once the run it reached has closed the re-send
 * runs in a new run, where the begin must still find the operation it created. A begin recorded
 * before the API minted it gets one from its run (start time and seeded random: the same on replay).
 */
export function beginOperationId(request: BeginRequest): string {
  return request.operationId ?? `op_${ulidFrom(workflowInfo().startTime.getTime(), Math.random)}`;
}
