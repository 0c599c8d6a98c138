import { Hono } from 'hono';
import type { Query } from '@drydock/client';
import { poolsWithCapacity, queryFilters, refusedInPage, takeFlash, type ConsoleEnv } from '../context';
import { FLEET_FILTERS, FleetPage, type FleetFilters } from '../pages/fleet';

type NodesQuery = Query<'get', '/v1/nodes'>;

/** The fleet page: the node list with the API's filters, capacity per pool, pending nodes. */
export function fleetRoutes(): Hono<ConsoleEnv> {
  const router = new Hono<ConsoleEnv>();
  router.get('/', async (c) => {
    const { api, session } = c.var;
    const filters: FleetFilters = queryFilters(c, FLEET_FILTERS);
    const cursor = c.req.query('cursor');
    const [nodes, pools, pending] = await Promise.all([
      api
        // The filters go as the page's query has them: the API validates them and its refusal shows.
        .GET('/v1/nodes', { params: { query: { ...filters, ...(cursor ? { cursor } : {}) } as NodesQuery } })
        .catch(refusedInPage),
      poolsWithCapacity(api),
      api.GET('/v1/nodes', { params: { query: { provisionState: 'pending' } } }),
    ]);
    return c.html(
      <FleetPage
        session={session}
        flash={takeFlash(session)}
        filters={filters}
        nodes={nodes}
        pools={pools}
        pending={pending.items}
      />,
      'problem' in nodes ? nodes.status : 200,
    );
  });
  return router;
}
