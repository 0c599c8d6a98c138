import { Hono } from 'hono';
import type { Query } from '@drydock/client';
import { LABEL_KEY } from '../../domain/labels';
import { poolsWithCapacity, queryFilters, refusedInPage, takeFlash, type ConsoleEnv } from '../context';
import { openOperations } from '../fleet-read';
import { DEFAULT_SORT, NODE_LIST_FILTERS, NODES_PER_PAGE, NodeListPage } from '../pages/node-list';
import { OverviewPage } from '../pages/overview';
import { DEFAULT_GROUP_BY } from '../rack-map';

/** The fleet overview (the landing page) and the node list. */
export function fleetRoutes(): Hono<ConsoleEnv> {
  const router = new Hono<ConsoleEnv>();

  router.get('/', async (c) => {
    const { api, session } = c.var;
    const asked = c.req.query('groupBy') || DEFAULT_GROUP_BY;
    const groupBy = LABEL_KEY.test(asked)
      ? asked
      : {
          problem: `groupBy must be a label key (letters, digits and . _ / -, at most 128, starting and ending with a letter or digit): ${JSON.stringify(asked.slice(0, 140))} is not one.`,
        };
    const [summary, pending, pools, operations] = await Promise.all([
      api.GET('/v1/node-summary', {
        params: { query: { groupBy: typeof groupBy === 'string' ? groupBy : DEFAULT_GROUP_BY } },
      }),
      api.GET('/v1/nodes', { params: { query: { provisionState: 'pending', sort: 'hostname', limit: 50 } } }),
      poolsWithCapacity(api),
      openOperations(api),
    ]);
    return c.html(
      <OverviewPage
        session={session}
        flash={takeFlash(session)}
        summary={summary}
        pending={pending.items}
        pools={pools}
        operations={operations}
        groupBy={groupBy}
      />,
      typeof groupBy === 'string' ? 200 : 400,
    );
  });

  router.get('/nodes', async (c) => {
    const { api, session } = c.var;
    const filters = queryFilters(c, NODE_LIST_FILTERS);
    const paging = queryFilters(c, ['sort', 'cursor', 'before'] as const);
    const [pools, nodes] = await Promise.all([
      api.GET('/v1/pools'),
      // The filters, order and page go as the page's query has them: the API validates them and
      // its refusal shows.
      api
        .GET('/v1/nodes', {
          params: {
            query: { sort: DEFAULT_SORT, ...filters, ...paging, limit: NODES_PER_PAGE } as Query<
              'get',
              '/v1/nodes'
            >,
          },
        })
        .catch(refusedInPage),
    ]);
    return c.html(
      <NodeListPage
        session={session}
        flash={takeFlash(session)}
        filters={filters}
        sort={paging.sort ?? DEFAULT_SORT}
        nodes={nodes}
        pools={pools.items.map((pool) => pool.id)}
      />,
      'problem' in nodes ? ('status' in nodes ? nodes.status : 400) : 200,
    );
  });

  return router;
}
