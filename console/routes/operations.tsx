import { Hono } from 'hono';
import type { Query } from '@drydock/client';
import { idPattern } from '../../domain/ids';
import { notFound, queryFilters, refusedInPage, takeFlash, workflowUrlOf, type ConsoleEnv } from '../context';
import { OPERATION_FILTERS, OperationPage, OperationsPage, type OperationFilters } from '../pages/operations';

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
    return c.html(
      <OperationPage
        session={session}
        flash={takeFlash(session)}
        operation={operation}
        workflowUrl={workflowUrlOf(c)}
      />,
    );
  });
  return router;
}
