import { Hono } from 'hono';
import { ApiError, type ApiClient, type Query, type Schemas } from '@drydock/client';
import { idPattern, SLUG_PATTERN } from '../../domain/ids';
import {
  CONSOLE_PATH,
  notFound,
  queryFilters,
  refusedInPage,
  takeFlash,
  workflowUrlOf,
  type ConsoleEnv,
  type Ctx,
} from '../context';
import { field } from '../controls';
import type { NodeAllocations } from '../drain-timeline';
import { OPERATION_FILTERS, OperationPage, OperationsPage, type OperationFilters } from '../pages/operations';
import { CancelPage, cancelledInWords, type CancelView } from '../pages/cancel';
import type { Back } from '../pages/rolling-maintenance';
import { readRolling } from '../rolling';
import { change } from './pools';

type OperationsQuery = Query<'get', '/v1/operations'>;

/** The operations list: running and recent operations, filtered by kind and status. */
export function operationRoutes(): Hono<ConsoleEnv> {
  const router = new Hono<ConsoleEnv>();
  router.get('/operations', async (c) => {
    const { api, session } = c.var;
    const filters: OperationFilters = queryFilters(c, OPERATION_FILTERS);
    const cursor = c.req.query('cursor');
    const operations = await api
      // The filters go as the page's query has them: the API validates them and its refusal shows.
      .GET('/v1/operations', {
        params: { query: { ...filters, ...(cursor ? { cursor } : {}) } as OperationsQuery },
      })
      .catch(refusedInPage);
    const hostnames =
      'problem' in operations
        ? new Map<string, string>()
        : await hostnamesOf(api, operations.items, session.caller.kind === 'operator');
    return c.html(
      <OperationsPage
        session={session}
        flash={takeFlash(session)}
        filters={filters}
        operations={operations}
        hostnames={hostnames}
        workflowUrl={workflowUrlOf(c)}
      />,
      'problem' in operations ? operations.status : 200,
    );
  });
  router.get('/operations/:id', async (c) => {
    const { api, session } = c.var;
    const id = c.req.param('id');
    if (!idPattern('op').test(id)) return notFound(c);
    const operation = await api.GET('/v1/operations/{id}', { params: { path: { id } } });
    const [rolling, node, allocations] = await Promise.all([
      operation.kind === 'pool-maintenance' ? readRolling(api, operation) : undefined,
      operation.nodeId ? nodeOf(api, operation.nodeId) : null,
      operation.kind === 'drain' && operation.nodeId ? allocationsOf(api, operation.nodeId) : undefined,
    ]);
    return c.html(
      <OperationPage
        session={session}
        flash={takeFlash(session)}
        operation={operation}
        node={node}
        rolling={rolling}
        allocations={allocations}
        workflowUrl={workflowUrlOf(c)}
      />,
    );
  });

  // A rolling maintenance's controls (operators; the API refuses any other key): resume, and cancel
  // from its confirmation page.
  router.post('/operations/:id/resume', async (c) => {
    const { api, form } = c.var;
    const id = operationIdOf(c);
    if (!id) return notFound(c);
    await change(c, 'Resume', async () => {
      const reason = field(form, 'reason');
      const op = await api.POST('/v1/operations/{id}/resume', {
        params: { path: { id } },
        body: reason ? { reason } : {},
      });
      return `Rolling maintenance ${op.id} resumed: failures count again from now.`;
    });
    return c.redirect(backTo(c, id), 303);
  });

  // Every open operation's cancel: its confirmation page says what it puts back; only that page's
  // form (confirm=yes) makes the one call, DELETE /v1/operations/{id}.
  router.get('/operations/:id/cancel', async (c) => {
    const { api, session } = c.var;
    const id = operationIdOf(c);
    if (!id) return notFound(c);
    const operation = await api.GET('/v1/operations/{id}', { params: { path: { id } } });
    return c.html(
      <CancelPage
        {...await cancelViewOf(api, operation)}
        session={session}
        flash={takeFlash(session)}
        back={backOf(c.req.query('back'))}
      />,
    );
  });

  router.post('/operations/:id/cancel', async (c) => {
    const { api, form, session } = c.var;
    const id = operationIdOf(c);
    if (!id) return notFound(c);
    const back = backOf(field(form, 'back'));
    // Only the confirmation page's form says yes: a POST without it makes no call.
    if (field(form, 'confirm') !== 'yes') {
      const query = back === 'operation' ? '' : `?${new URLSearchParams({ back })}`;
      return c.redirect(`${CONSOLE_PATH}/operations/${id}/cancel${query}`, 303);
    }
    const children = childrenOf(field(form, 'children'));
    const reason = field(form, 'reason');
    try {
      const op = await api.DELETE('/v1/operations/{id}', {
        params: { path: { id } },
        body: { ...(reason ? { reason } : {}), ...(children ? { children } : {}) },
      });
      const node = op.nodeId ? await nodeOf(api, op.nodeId) : null;
      session.flash = { kind: 'ok', text: cancelledInWords(op, node?.hostname ?? null, children) };
    } catch (error) {
      if (!(error instanceof ApiError) || error.status === 401) throw error;
      // Refused (past its point of no return, already finished, not an operator's key): the
      // confirmation again, the operation as it now is, the API's words at the top.
      const operation = await api.GET('/v1/operations/{id}', { params: { path: { id } } });
      return c.html(
        <CancelPage
          {...await cancelViewOf(api, operation)}
          session={session}
          back={back}
          refused={`${error.message} (${error.code})`}
        />,
        error.status as 400 | 403 | 404 | 409,
      );
    }
    return c.redirect(backTo(c, id), 303);
  });
  return router;
}

function operationIdOf(c: Ctx): string | undefined {
  const id = c.req.param('id');
  return id && idPattern('op').test(id) ? id : undefined;
}

/** Where a control's answer goes back to: `pool:<id>` (its pool's page), else the operation's page. */
const backOf = (value: string | undefined): Back => {
  const poolId = value?.startsWith('pool:') ? value.slice('pool:'.length) : undefined;
  return poolId && SLUG_PATTERN.test(poolId) ? `pool:${poolId}` : 'operation';
};

function backTo(c: Ctx, id: string): string {
  const back = backOf(field(c.var.form, 'back'));
  return back === 'operation'
    ? `${CONSOLE_PATH}/operations/${id}`
    : `${CONSOLE_PATH}/pools/${back.slice('pool:'.length)}`;
}

const childrenOf = (value: string | undefined) =>
  value === 'finish' || value === 'cancel' ? value : undefined;

/** The node an operation works on, as the key reads it; null when it cannot be read (deleted, hidden). */
async function nodeOf(api: ApiClient, nodeId: string): Promise<Schemas['Node'] | null> {
  return api.GET('/v1/nodes/{id}', { params: { path: { id: nodeId } } }).catch((error: unknown) => {
    if (error instanceof ApiError && error.status !== 401) return null;
    throw error;
  });
}

/** What a cancel confirmation needs besides the session: the operation and its node. */
async function cancelViewOf(
  api: ApiClient,
  operation: Schemas['Operation'],
): Promise<Pick<CancelView, 'operation' | 'node'>> {
  return { operation, node: operation.nodeId ? await nodeOf(api, operation.nodeId) : null };
}

/**
 * The hostnames of the operations' nodes: one `GET /v1/nodes?id=…` for the page (at most 100
 * operations, so at most 100 nodes; an operator's read includes forgotten nodes, whose purges are
 * listed). A node the key cannot see keeps its id.
 */
async function hostnamesOf(
  api: ApiClient,
  operations: Schemas['Operation'][],
  operator: boolean,
): Promise<Map<string, string>> {
  const ids = [...new Set(operations.flatMap((op) => (op.nodeId ? [op.nodeId] : [])))];
  if (ids.length === 0) return new Map();
  const read = await api.GET('/v1/nodes', {
    params: { query: { id: ids.join(','), limit: 200, ...(operator ? { includeDeleted: 'true' } : {}) } },
  });
  return new Map(read.items.map((node) => [node.id, node.hostname]));
}

/** At most this many of a node's allocations are read for a drain's picture (500 a call). */
export const DRAIN_ALLOCATIONS_READ = 2000;

/**
 * A node's allocations, oldest first (`GET /v1/allocations?nodeId=`, 500 a call), at most
 * `DRAIN_ALLOCATIONS_READ`; `more` when it has more than that.
 */
async function allocationsOf(api: ApiClient, nodeId: string): Promise<NodeAllocations> {
  const items: Schemas['Allocation'][] = [];
  let cursor: string | undefined;
  do {
    const page = await api.GET('/v1/allocations', { params: { query: { nodeId, limit: 500, cursor } } });
    items.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor && items.length < DRAIN_ALLOCATIONS_READ);
  return { items, more: cursor !== undefined };
}
