import { z } from '@hono/zod-openapi';
import { actorOf, idempotencyScope, type Principal } from '../domain/principal';
import { labelsOf, nodeView, type NodeRow } from '../db/nodes';
import { operationOfKey, operationView } from '../db/operations';
import type { BeginRequest, BeginResult, LifecycleWorkflow } from '../workflows/definitions';
import {
  HostnameKey,
  LifecycleOperationKey,
  NodeIdKey,
  PoolIdKey,
  TenantIdKey,
} from '../workflows/search-attributes';
import type { AppDeps } from './env';
import { errorResponses, json, NodeSchema, OperationSchema } from './schemas';
import type { SingleFlight } from './single-flight';
import { requestHash, updateWithStart } from './update-with-start';

// Routes and services signal workflows the one way activities do too.
export { signalIfRunning } from '../activities/signals';

/** A begin request's own fields: the actor and the Idempotency-Key's are filled in by the start. */
export type BeginFields<R extends BeginRequest> = Omit<
  R,
  'actor' | 'idempotencyScope' | 'idempotencyKey' | 'requestHash' | 'operationId'
>;

/** What a route starts an operation with; the rest follows from the workflow, the node and the caller. */
export interface OperationStart<Input extends { nodeId: string }, Request extends BeginRequest> {
  /** The node, as the caller may see it. */
  node: NodeRow;
  principal: Principal;
  request: BeginFields<Request>;
  /** The workflow's argument beside the node's id. */
  input?: Omit<Input, 'nodeId'>;
  /** The workflow's summary in the Web UI; by default its kind, the node and the reason. */
  summary?: string;
  /**
   * The caller's Idempotency-Key and the request fields it is bound to (with the kind and node):
   * the request it already stands for answers that operation (not created), another one
   * IDEMPOTENCY_KEY_REUSED. Without it the operation has no key.
   */
  idempotency?: { key: string | null | undefined; binds: Record<string, unknown> };
  /** Racing requests with one key share the first one's start; only that one is `created`. */
  inFlight?: SingleFlight<BeginResult>;
}

/**
 * Starts (or joins) a lifecycle operation the one way (docs/architecture.md, rule 4): the answer
 * an Idempotency-Key already stands for, else update-with-start of the workflow's `begin`, with the
 * node's search attributes and a summary for the Web UI.
 */
export async function startOperation<
  Input extends { nodeId: string },
  Request extends BeginRequest,
  Result extends BeginResult,
>(
  deps: AppDeps,
  workflow: LifecycleWorkflow<Input, Request, Result>,
  start: OperationStart<Input, Request>,
): Promise<BeginResult> {
  const { node, principal } = start;
  const key = start.idempotency?.key ?? null;
  const scope = key ? idempotencyScope(principal) : null;
  const hash = key
    ? requestHash({ route: workflow.kind, nodeId: node.id, ...start.idempotency?.binds })
    : null;
  const keyed = { idempotencyScope: scope, idempotencyKey: key, requestHash: hash };
  const existing = await operationOfKey(deps.db, keyed);
  if (existing) {
    const labels = await labelsOf(deps.db, node.id);
    return { operation: operationView(existing), node: nodeView(node, labels), created: false };
  }
  const begin = () =>
    updateWithStart(deps, {
      workflow,
      workflowId: workflow.workflowId(node.id),
      input: { nodeId: node.id, ...start.input } as Input,
      searchAttributes: [
        { key: NodeIdKey, value: node.id },
        { key: TenantIdKey, value: node.tenantId ?? '' },
        { key: PoolIdKey, value: node.poolId ?? '' },
        { key: LifecycleOperationKey, value: workflow.kind },
        { key: HostnameKey, value: node.hostname },
      ],
      summary:
        start.summary ??
        `${workflow.kind} ${node.hostname} (${node.id}): ${start.request.reason ?? 'no reason given'}`,
      request: { actor: actorOf(principal), ...start.request, ...keyed } as Request,
    });
  if (!start.inFlight || !key) return begin();
  const { result, leader } = await start.inFlight.run(`${scope}/${key}`, hash!, begin);
  return { ...result, created: leader && result.created };
}

/** What a route that starts an operation answers: 202 when this request began it, else 200. */
export const startResponses = <T extends z.ZodType>(schema: T, began: string, found: string) => ({
  202: json(schema, began),
  200: json(schema, found),
  ...errorResponses,
});

/** The answer of a start that names the node too (drain, purge). */
export const NodeOperationSchema = z.object({ node: NodeSchema, operation: OperationSchema });
