import { Hono } from 'hono';
import { ApiError } from '../../client';
import { CONSOLE_PATH, nodeIdOf, notFound, takeFlash, type ConsoleEnv } from '../context';
import { CONTROLS } from '../controls';
import { NodePage } from '../pages/node';

/** The node page and the POST of each of its controls. */
export function nodeRoutes(): Hono<ConsoleEnv> {
  const router = new Hono<ConsoleEnv>();

  router.get('/nodes/:id', async (c) => {
    const { api, session } = c.var;
    const id = nodeIdOf(c);
    if (!id) return notFound(c);
    const type = c.req.query('type') || undefined;
    const cursor = c.req.query('cursor') || undefined;
    const node = await api.GET('/v1/nodes/{id}', { params: { path: { id } } });
    const [allocations, running, events] = await Promise.all([
      api.GET('/v1/allocations', { params: { query: { nodeId: id, live: 'true' } } }),
      api.GET('/v1/operations', { params: { query: { nodeId: id, status: 'running' } } }),
      api.GET('/v1/nodes/{id}/events', {
        params: { path: { id }, query: { type, cursor, order: 'newest', limit: 50 } },
      }),
    ]);
    // The list has no progress: each running operation read on its own carries it.
    const operations = await Promise.all(
      running.items.map((op) => api.GET('/v1/operations/{id}', { params: { path: { id: op.id } } })),
    );
    const { temporalUiUrl, temporal } = c.var.deps;
    return c.html(
      <NodePage
        session={session}
        flash={takeFlash(session)}
        node={node}
        allocations={allocations.items}
        operations={operations}
        events={{ ...events, type }}
        workflowUrl={
          temporalUiUrl
            ? (workflowId) =>
                `${temporalUiUrl}/namespaces/${encodeURIComponent(temporal.options.namespace)}/workflows/${encodeURIComponent(workflowId)}`
            : undefined
        }
      />,
    );
  });

  router.post('/nodes/:id/:control', async (c) => {
    const { api, session, form } = c.var;
    const id = nodeIdOf(c);
    const control = c.req.param('control');
    const chosen = Object.hasOwn(CONTROLS, control) ? CONTROLS[control] : undefined;
    if (!id || !chosen) return notFound(c);
    try {
      session.flash = { kind: 'ok', text: await chosen.run(api, id, form) };
    } catch (error) {
      if (!(error instanceof ApiError) || error.status === 401) throw error;
      session.flash = { kind: 'error', text: `${control} refused: ${error.message} (${error.code})` };
    }
    return c.redirect(chosen.back === 'node' ? `${CONSOLE_PATH}/nodes/${id}` : CONSOLE_PATH, 303);
  });

  return router;
}
