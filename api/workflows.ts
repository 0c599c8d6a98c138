import { z } from '@hono/zod-openapi';
import type { SearchAttributePair } from '@temporalio/common';
import { actorOf, idempotencyScope, type Principal } from '../domain/principal';
import { labelsOf, nodeView, type NodeRow } from '../db/nodes';
import { operationOfKey, operationView, type OperationRow } from '../db/operations';
import type { PoolRow } from '../db/queries/pools';
import type {
  BeginRequest,
  BeginResult,
  LifecycleWorkflow,
  OperationBegun,
  OperationWorkflow,
  PoolWorkflow,
} from '../workflows/definitions';
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

// Routes and services signal and describe workflows the one way activities do too.
export { signalIfRunning } from '../activities/signals';
export { workflowStatus } from '../activities/workflow-status';

/** A begin request's own fields: the actor and the Idempotency-Key's are filled in by the start. */
export type BeginFields<R extends BeginRequest> = Omit<
  R,
  'actor' | 'idempotencyScope' | 'idempotencyKey' | 'requestHash' | 'operationId'
>;

/** What a route starts an operation with; the rest follows from the workflow, its subject and the caller. */
interface StartFields<Input, Request extends BeginRequest, Answer> {
  principal: Principal;
  request: BeginFields<Request>;
  /** The workflow's argument beside its subject's id. */
  input?: Omit<Input, 'nodeId' | 'poolId'>;
  /** The workflow's summary in the Web UI; by default its kind, the subject and the reason. */
  summary?: string;
  /**
   * The caller's Idempotency-Key and the request fields it is bound to (with the kind and the
   * subject): the request it already stands for answers that operation (not created), another one
   * IDEMPOTENCY_KEY_REUSED. Without it the operation has no key.
   */
  idempotency?: { key: string | null | undefined; binds: Record<string, unknown> };
  /** Racing requests with one key share the first one's start; only that one is `created`. */
  inFlight?: SingleFlight<Answer>;
}

/** A node operation's start: the node, as the caller may see it. */
export interface OperationStart<
  Input extends { nodeId: string },
  Request extends BeginRequest,
> extends StartFields<Input, Request, BeginResult> {
  node: NodeRow;
}

/** A pool operation's start: the pool, as the caller may see it. */
export interface PoolOperationStart<
  Input extends { poolId: string },
  Request extends BeginRequest,
> extends StartFields<Input, Request, OperationBegun> {
  pool: PoolRow;
}

/** What a start needs to know of the thing the workflow runs on. */
interface Subject<Answer> {
  id: string;
  /** The subject's part of the workflow's argument and of the request hash. */
  key: { nodeId: string } | { poolId: string };
  searchAttributes: SearchAttributePair[];
  /** How the summary names it. */
  name: string;
  /** The answer for an operation an Idempotency-Key already stands for. */
  replay(operation: OperationRow): Promise<Answer>;
}

function nodeSubject(deps: AppDeps, kind: string, node: NodeRow): Subject<BeginResult> {
  return {
    id: node.id,
    key: { nodeId: node.id },
    searchAttributes: [
      { key: NodeIdKey, value: node.id },
      { key: TenantIdKey, value: node.tenantId ?? '' },
      { key: PoolIdKey, value: node.poolId ?? '' },
      { key: LifecycleOperationKey, value: kind },
      { key: HostnameKey, value: node.hostname },
    ],
    name: `${node.hostname} (${node.id})`,
    async replay(operation) {
      const labels = await labelsOf(deps.db, node.id);
      return { operation: operationView(operation), node: nodeView(node, labels), created: false };
    },
  };
}

function poolSubject(kind: string, pool: PoolRow): Subject<OperationBegun> {
  return {
    id: pool.id,
    key: { poolId: pool.id },
    searchAttributes: [
      { key: TenantIdKey, value: pool.tenantId ?? '' },
      { key: PoolIdKey, value: pool.id },
      { key: LifecycleOperationKey, value: kind },
    ],
    name: pool.id,
    replay: async (operation) => ({ operation: operationView(operation), created: false }),
  };
}

/**
 * Starts (or joins) an operation the one way (docs/architecture.md, rule 4): the answer an
 * Idempotency-Key already stands for, else update-with-start of the workflow's `begin`, with the
 * subject's search attributes (a node's, or a pool's) and a summary for the Web UI.
 */
export function startOperation<
  Input extends { nodeId: string },
  Request extends BeginRequest,
  Result extends BeginResult,
>(
  deps: AppDeps,
  workflow: LifecycleWorkflow<Input, Request, Result>,
  start: OperationStart<Input, Request>,
): Promise<BeginResult>;
export function startOperation<
  Input extends { poolId: string },
  Request extends BeginRequest,
  Result extends OperationBegun,
>(
  deps: AppDeps,
  workflow: PoolWorkflow<Input, Request, Result>,
  start: PoolOperationStart<Input, Request>,
): Promise<OperationBegun>;
export async function startOperation(
  deps: AppDeps,
  workflow: OperationWorkflow<object, BeginRequest, OperationBegun>,
  start: (
    OperationStart<{ nodeId: string }, BeginRequest> | PoolOperationStart<{ poolId: string }, BeginRequest>
  ) &
    StartFields<object, BeginRequest, OperationBegun>,
): Promise<OperationBegun> {
  const subject: Subject<OperationBegun> =
    'node' in start ? nodeSubject(deps, workflow.kind, start.node) : poolSubject(workflow.kind, start.pool);
  const { principal } = start;
  const key = start.idempotency?.key ?? null;
  const scope = key ? idempotencyScope(principal) : null;
  const hash = key
    ? requestHash({ route: workflow.kind, ...subject.key, ...start.idempotency?.binds })
    : null;
  const keyed = { idempotencyScope: scope, idempotencyKey: key, requestHash: hash };
  const existing = await operationOfKey(deps.db, keyed);
  if (existing) return subject.replay(existing);
  const begin = () =>
    updateWithStart(deps, {
      workflow,
      workflowId: workflow.workflowId(subject.id),
      input: { ...subject.key, ...start.input },
      searchAttributes: subject.searchAttributes,
      summary:
        start.summary ?? `${workflow.kind} ${subject.name}: ${start.request.reason ?? 'no reason given'}`,
      request: { actor: actorOf(principal), ...start.request, ...keyed },
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
