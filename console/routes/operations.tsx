import { Hono } from 'hono';
import type { Query } from '@drydock/client';
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
import { OPERATION_FILTERS, OperationPage, OperationsPage, type OperationFilters } from '../pages/operations';
import { CancelRollingPage, type Back } from '../pages/rolling-maintenance';
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
    return c.html(
      <OperationsPage
        session={session}
        flash={takeFlash(session)}
        filters={filters}
        operations={operations}
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
    const rolling = operation.kind === 'pool-maintenance' ? await readRolling(api, operation) : undefined;
    return c.html(
      <OperationPage
        session={session}
        flash={takeFlash(session)}
        operation={operation}
        rolling={rolling}
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

  router.get('/operations/:id/cancel', async (c) => {
    const { api, session } = c.var;
    const id = operationIdOf(c);
    if (!id) return notFound(c);
    const operation = await api.GET('/v1/operations/{id}', { params: { path: { id } } });
    if (operation.kind !== 'pool-maintenance') return notFound(c);
    return c.html(
      <CancelRollingPage
        session={session}
        flash={takeFlash(session)}
        rolling={await readRolling(api, operation)}
        back={backOf(c.req.query('back'))}
      />,
    );
  });

  router.post('/operations/:id/cancel', async (c) => {
    const { api, form } = c.var;
    const id = operationIdOf(c);
    if (!id) return notFound(c);
    // Only the confirmation page's form says yes: a POST without it makes no call.
    if (field(form, 'confirm') !== 'yes') {
      const back = backOf(field(form, 'back'));
      const query = back === 'operation' ? '' : `?${new URLSearchParams({ back })}`;
      return c.redirect(`${CONSOLE_PATH}/operations/${id}/cancel${query}`, 303);
    }
    await change(c, 'Cancel', async () => {
      const children = field(form, 'children') as 'finish' | 'cancel' | undefined;
      const reason = field(form, 'reason');
      const op = await api.DELETE('/v1/operations/{id}', {
        params: { path: { id } },
        body: { ...(reason ? { reason } : {}), ...(children ? { children } : {}) },
      });
      return `Rolling maintenance ${op.id} cancelled; the node maintenances running ${children === 'cancel' ? 'were cancelled too' : 'finish'}.`;
    });
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
