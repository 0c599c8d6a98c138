import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { and, desc, eq, lt, or, sql, type SQL } from 'drizzle-orm';
import { DrydockError } from '../../domain/errors';
import { idPattern } from '../../domain/ids';
import { OPERATION_KINDS, OPERATION_STATUSES } from '../../domain/operation';
import type { Principal } from '../../domain/principal';
import { operationView, type OperationRow } from '../../db/operations';
import { nodes, operations } from '../../db/schema';
import { visibleTo } from '../../db/nodes';
import { progressQuery } from '../../workflows/definitions';
import { requireAction } from '../auth';
import type { AppDeps, AppEnv } from '../env';
import { decodeCursor, page } from '../pagination';
import { cursor, errorResponses, idOf, json, limit, OperationSchema } from '../schemas';

export const operationsRouter = new OpenAPIHono<AppEnv>();

/** Operations on nodes the principal can see; pool-wide operations are for operators. */
function operationVisibleTo(principal: Principal): SQL {
  if (principal.kind === 'operator') return sql`true`;
  return sql`${operations.nodeId} in (select ${nodes.id} from ${nodes} where ${visibleTo(principal)})`;
}

/** How long GET /v1/operations/{id} waits for a workflow to answer `progress`. */
const PROGRESS_TIMEOUT_MS = 2_000;

async function withProgress(deps: AppDeps, op: OperationRow) {
  const view = operationView(op);
  if (op.status !== 'running') return view;
  let progress: unknown = null;
  try {
    progress = await deps.temporal.withDeadline(Date.now() + PROGRESS_TIMEOUT_MS, () =>
      deps.temporal.workflow.getHandle(op.workflowId).query(progressQuery),
    );
  } catch {
    // The workflow cannot be asked right now (no worker, finished, unreachable): say so with null.
  }
  return { ...view, progress };
}

operationsRouter.openapi(
  createRoute({
    method: 'get',
    path: '/v1/operations/{id}',
    summary: 'An operation, with its workflow progress while it runs',
    request: { params: z.object({ id: idOf('op') }) },
    responses: { 200: json(OperationSchema, 'the operation'), ...errorResponses },
  }),
  async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:read');
    const deps = c.get('deps');
    const id = c.req.valid('param').id;
    const [op] = await deps.db
      .select()
      .from(operations)
      .where(and(eq(operations.id, id), operationVisibleTo(principal)));
    if (!op) throw new DrydockError('NOT_FOUND', `operation ${id} not found`, { operationId: id });
    return c.json(await withProgress(deps, op), 200);
  },
);

operationsRouter.openapi(
  createRoute({
    method: 'get',
    path: '/v1/operations',
    summary: 'List operations, newest first',
    request: {
      query: z.object({
        nodeId: idOf('node').optional(),
        kind: z.enum(OPERATION_KINDS).optional(),
        status: z.enum(OPERATION_STATUSES).optional(),
        limit: limit(100, 50),
        cursor: cursor.optional(),
      }),
    },
    responses: {
      200: json(
        z.object({ items: z.array(OperationSchema), nextCursor: z.string().nullable() }),
        'operations',
      ),
      ...errorResponses,
    },
  }),
  async (c) => {
    const principal = c.get('principal');
    requireAction(principal, 'compute:nodes:read');
    const q = c.req.valid('query');
    const before = decodeCursor(q.cursor, idPattern('op'));
    const rows = await c
      .get('deps')
      .db.select()
      .from(operations)
      .where(
        and(
          operationVisibleTo(principal),
          q.nodeId ? eq(operations.nodeId, q.nodeId) : undefined,
          q.kind ? eq(operations.kind, q.kind) : undefined,
          q.status ? eq(operations.status, q.status) : undefined,
          before ? or(lt(operations.id, before)) : undefined,
        ),
      )
      .orderBy(desc(operations.id))
      .limit(q.limit + 1);
    const result = page(rows, q.limit, (op) => op.id);
    return c.json({ items: result.items.map(operationView), nextCursor: result.nextCursor }, 200);
  },
);
