import { Hono } from 'hono';
import type { Query } from '@drydock/client';
import { LABEL_KEY } from '../../domain/labels';
import { poolsWithCapacity, queryFilters, refusedInPage, takeFlash, type ConsoleEnv } from '../context';
import { everyNode, openOperations } from '../fleet-read';
import { BY_HOSTNAME, sortNodes, sortOf } from '../node-sort';
import { NODE_LIST_FILTERS, NODES_PER_PAGE, NodeListPage } from '../pages/node-list';
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
    const [nodes, pools, operations] = await Promise.all([
      everyNode(api),
      poolsWithCapacity(api),
      openOperations(api),
    ]);
    return c.html(
      <OverviewPage
        session={session}
        flash={takeFlash(session)}
        nodes={nodes}
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
    const sort = sortOf(c.req.query('sort'));
    const page = pageOf(c.req.query('page'));
    const [pools, nodes] = await Promise.all([
      api.GET('/v1/pools'),
      'problem' in sort
        ? sort
        : 'problem' in page
          ? page
          : // The filters go as the page's query has them: the API validates them and its refusal shows.
            everyNode(api, filters as Query<'get', '/v1/nodes'>)
              .then((all) => {
                const start = (page.page - 1) * NODES_PER_PAGE;
                return {
                  items: sortNodes(all, sort).slice(start, start + NODES_PER_PAGE),
                  page: page.page,
                  total: all.length,
                };
              })
              .catch(refusedInPage),
    ]);
    return c.html(
      <NodeListPage
        session={session}
        flash={takeFlash(session)}
        filters={filters}
        sort={'problem' in sort ? BY_HOSTNAME : sort}
        nodes={nodes}
        pools={pools.items.map((pool) => pool.id)}
      />,
      'problem' in nodes ? ('status' in nodes ? nodes.status : 400) : 200,
    );
  });

  return router;
}

/** The page's `page`: a whole number from 1 (default 1), or why it is refused. */
function pageOf(page: string | undefined): { page: number } | { problem: string } {
  if (page === undefined || page === '') return { page: 1 };
  const n = /^[1-9]\d{0,5}$/.test(page) ? Number(page) : NaN;
  return Number.isNaN(n) ? { problem: 'page must be a whole number from 1.' } : { page: n };
}
