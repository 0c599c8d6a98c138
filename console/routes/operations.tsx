import { Hono } from 'hono';
import type { Query } from '@drydock/client';
import { queryFilters, refusedInPage, takeFlash, workflowUrlOf, type ConsoleEnv } from '../context';
import { OPERATION_FILTERS, OperationsPage, type OperationFilters } from '../pages/operations';

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
  return router;
}
