import { randomUUID } from 'node:crypto';
import { Hono } from 'hono';
import { ApiError } from '@drydock/client';
import {
  CONSOLE_PATH,
  nodeIdOf,
  notFound,
  refusedInPage,
  takeFlash,
  workflowUrlOf,
  type ConsoleEnv,
  type Ctx,
} from '../context';
import { CONTROLS, field, type Confirmation } from '../controls';
import { DecommissionPage } from '../pages/danger';
import { ActionPage, type ActionPageProps } from '../pages/node-actions';
import { NodePage } from '../pages/node';
import { mayUse } from '../permissions';

type ConsoleControl = (typeof CONTROLS)[string];

/** How many of its recent break-glass SSH certificates the node page lists. */
const SSH_LISTED = 10;
/** How many of its recent commands the node page lists. */
const COMMANDS_LISTED = 10;
/** How many of its latest operations (finished ones too) the node page's timeline lists. */
const OPERATIONS_LISTED = 20;
/** How many of its latest forced releases the timeline names under their operations. */
const FORCED_LISTED = 200;

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
    const [allocations, pending, running, recent, forced, events, maintenances, commands, actions, ssh] =
      await Promise.all([
        api.GET('/v1/allocations', { params: { query: { nodeId: id, live: 'true' } } }),
        api.GET('/v1/operations', { params: { query: { nodeId: id, status: 'pending' } } }),
        api.GET('/v1/operations', { params: { query: { nodeId: id, status: 'running' } } }),
        // Its latest operations, finished ones too: the timeline keeps what ended, with its result.
        api.GET('/v1/operations', { params: { query: { nodeId: id, limit: OPERATIONS_LISTED } } }),
        // What its operations released by force, each an event naming the operation.
        api.GET('/v1/nodes/{id}/events', {
          params: {
            path: { id },
            query: { type: 'allocation.force-released', order: 'newest', limit: FORCED_LISTED },
          },
        }),
        api.GET('/v1/nodes/{id}/events', {
          params: { path: { id }, query: { type, cursor, order: 'newest', limit: 50 } },
        }),
        api.GET('/v1/operations', { params: { query: { nodeId: id, kind: 'maintenance', limit: 1 } } }),
        // The node's owner's (a key of a tenant the pool is only granted to is refused: said in the page).
        api
          .GET('/v1/nodes/{id}/commands', { params: { path: { id }, query: { limit: COMMANDS_LISTED } } })
          .catch(refusedInPage),
        mayUse(node, session, 'compute:nodes:command')
          ? api.GET('/v1/nodes/{id}/actions', { params: { path: { id } } }).catch(refusedInPage)
          : { problem: 'not needed' },
        api
          .GET('/v1/nodes/{id}/ssh-certificates', { params: { path: { id }, query: { limit: SSH_LISTED } } })
          .catch(refusedInPage),
      ]);
    // The open operations (a pending one waits for a worker) and its latest maintenance, open or
    // ended, each read on its own for its progress as the workflow last wrote it.
    const open = [...pending.items, ...running.items];
    const [latestMaintenance, ...opened] = await Promise.all(
      [maintenances.items[0], ...open].map((op) =>
        op ? api.GET('/v1/operations/{id}', { params: { path: { id: op.id } } }) : undefined,
      ),
    );
    const openIds = new Set(open.map((op) => op.id));
    const operations = [
      ...opened.filter((op) => op !== undefined),
      ...recent.items.filter((op) => !openIds.has(op.id)),
    ].sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
    return c.html(
      <NodePage
        session={session}
        flash={takeFlash(session)}
        node={node}
        allocations={allocations.items}
        operations={operations}
        moreOperations={recent.nextCursor !== null}
        forceReleased={forced.items}
        maintenance={latestMaintenance}
        commands={commands}
        actions={actions}
        sshCertificates={ssh}
        events={{ ...events, type }}
        workflowUrl={workflowUrlOf(c)}
      />,
    );
  });

  // The decommission preview (the API's preview changes nothing), and its execute.
  router.get('/nodes/:id/decommission', async (c) => {
    const { api, session } = c.var;
    const id = nodeIdOf(c);
    if (!id) return notFound(c);
    const node = await api.GET('/v1/nodes/{id}', { params: { path: { id } } });
    // Offered in the danger zone, to operator keys: any other key gets the page an unknown path gets.
    if (!mayUse(node, session, 'operator')) return notFound(c);
    const preview = await api.POST('/v1/nodes/{id}/decommission/preview', { params: { path: { id } } });
    return c.html(
      <DecommissionPage
        session={session}
        flash={takeFlash(session)}
        node={node}
        preview={preview}
        idempotencyKey={`console-decommission-${randomUUID()}`}
      />,
    );
  });

  router.post('/nodes/:id/decommission', async (c) => {
    const { api, session, form } = c.var;
    const id = nodeIdOf(c);
    if (!id) return notFound(c);
    const previewPage = `${CONSOLE_PATH}/nodes/${id}/decommission`;
    const node = await api.GET('/v1/nodes/{id}', { params: { path: { id } } });
    const typed = field(form, 'confirm') ?? '';
    if (typed !== node.hostname) {
      // The page again, with the owner and reason as typed: only the hostname is to be typed again.
      const preview = await api.POST('/v1/nodes/{id}/decommission/preview', { params: { path: { id } } });
      return c.html(
        <DecommissionPage
          session={session}
          flash={{
            kind: 'error',
            text: `"${typed}" is not this node's hostname (${node.hostname}): nothing was done. Type it exactly to confirm.`,
          }}
          node={node}
          preview={preview}
          idempotencyKey={field(form, 'idempotencyKey') || `console-decommission-${randomUUID()}`}
          typed={{ operator: field(form, 'operator') ?? '', reason: field(form, 'reason') ?? '' }}
        />,
        400,
      );
    }
    try {
      const operation = await api.POST('/v1/nodes/{id}/decommission', {
        params: { path: { id }, header: { 'idempotency-key': field(form, 'idempotencyKey') ?? '' } },
        body: {
          confirm: typed,
          nodeGeneration: Number(field(form, 'nodeGeneration')),
          dependencyDigest: field(form, 'dependencyDigest') ?? '',
          operator: field(form, 'operator') ?? '',
          reason: field(form, 'reason') ?? '',
        },
      });
      session.flash = {
        kind: 'ok',
        text: `${node.hostname}: decommission requested as operation ${operation.id} (its progress is under Operations).`,
      };
      return c.redirect(`${CONSOLE_PATH}/nodes/${id}`, 303);
    } catch (error) {
      if (!(error instanceof ApiError) || error.status === 401) throw error;
      // A preview gone stale: the page shows the new one, to be checked and confirmed again.
      session.flash = {
        kind: 'error',
        text:
          error.code === 'CONFLICT'
            ? `${node.hostname} changed since the preview you confirmed (${error.message}): nothing was done. This is the new preview: check it and confirm again.`
            : `Decommission refused: ${error.message} (${error.code})`,
      };
      // A key that may not decommission may not preview either: back to the node page.
      return c.redirect(error.status === 403 ? `${CONSOLE_PATH}/nodes/${id}` : previewPage, 303);
    }
  });

  // Each control's path spelled out, not `/nodes/:id/:control`: beside `/nodes/:id/decommission`
  // a parameter would make Hono fall back from its one-regexp router to its slower trie for every
  // route of the app, the API's included. Any other path is the catch-all's not-found page.
  for (const [control, chosen] of Object.entries(CONTROLS)) {
    router.get(`/nodes/:id/${control}`, (c) => confirmPage(c, control, chosen));
    router.post(`/nodes/:id/${control}`, (c) => runControl(c, control, chosen));
  }

  return router;
}

/** A control's page: what it does and its form (a confirmation, for one that acts at once). */
async function confirmPage(c: Ctx, control: string, chosen: ConsoleControl) {
  const { session } = c.var;
  const id = nodeIdOf(c);
  if (!id || !chosen.confirm) return notFound(c);
  const view = await actionView(c, id, control, chosen.confirm);
  // A key the node page offers no such control gets the page any unknown path gets.
  if (!view) return notFound(c);
  return c.html(<ActionPage {...view} flash={takeFlash(session)} />);
}

/**
 * What a control's page shows: the node, its live allocations, and what the control chooses
 * from (the pools an approval may put it in; the ladders of its pool's remediation policy).
 * Undefined when the key is not offered the control on this node.
 */
async function actionView(
  c: Ctx,
  id: string,
  control: string,
  confirmation: Confirmation,
  typed?: ActionPageProps['typed'],
): Promise<ActionPageProps | undefined> {
  const { api, session } = c.var;
  const [node, allocations] = await Promise.all([
    api.GET('/v1/nodes/{id}', { params: { path: { id } } }),
    api.GET('/v1/allocations', { params: { query: { nodeId: id, live: 'true' } } }),
  ]);
  if (!mayUse(node, session, confirmation.offeredTo)) return undefined;
  const pools = control === 'approve' ? (await api.GET('/v1/pools')).items : [];
  const pool =
    control === 'remediate' && node.poolId
      ? await api.GET('/v1/pools/{id}', { params: { path: { id: node.poolId } } }).catch(() => undefined)
      : undefined;
  return {
    session,
    node,
    control,
    confirmation,
    allocations: allocations.items,
    pools,
    pool,
    typed,
    idempotencyKey: field(c.var.form ?? {}, 'idempotencyKey') || `console-${control}-${randomUUID()}`,
  };
}

/** A control's POST: run it (after its confirmation, when it needs one), then back with a flash. */
async function runControl(c: Ctx, control: string, chosen: ConsoleControl) {
  const { api, session, form } = c.var;
  const id = nodeIdOf(c);
  if (!id) return notFound(c);
  const confirmPath = `${CONSOLE_PATH}/nodes/${id}/${control}`;
  if (chosen.confirm && !chosen.confirm.optional && field(form, 'confirm') !== 'yes') {
    session.flash = {
      kind: 'error',
      text: `${chosen.confirm.title} needs its confirmation: nothing was done. Read what it does and confirm below.`,
    };
    return c.redirect(confirmPath, 303);
  }
  if (chosen.confirm?.typeHostname) {
    // The hostname typed on the page must be the node's: otherwise no call, and the page again
    // with what was typed kept (but the hostname, to be typed again).
    const node = await api.GET('/v1/nodes/{id}', { params: { path: { id } } });
    const typed = field(form, 'hostname') ?? '';
    if (typed !== node.hostname) {
      const view = await actionView(c, id, control, chosen.confirm, {
        reason: field(form, 'reason') ?? '',
        force: field(form, 'force') === 'yes',
      });
      if (!view) return notFound(c);
      const flash = {
        kind: 'error' as const,
        text: `"${typed}" is not this node's hostname (${node.hostname}): nothing was done. Type it exactly to confirm.`,
      };
      return c.html(<ActionPage {...view} flash={flash} />, 400);
    }
  }
  try {
    session.flash = { kind: 'ok', text: await chosen.run(api, id, form) };
  } catch (error) {
    if (!(error instanceof ApiError) || error.status === 401) throw error;
    session.flash = { kind: 'error', text: `${control} refused: ${error.message} (${error.code})` };
    // A key the control is not offered to has no confirmation page to go back to.
    if (chosen.confirm?.refusalBack && error.status !== 403) return c.redirect(confirmPath, 303);
  }
  // Asked from the node's own pages (`back=node`), an approval or a rejection goes back there.
  const toNode = chosen.back === 'node' || field(form, 'back') === 'node';
  return c.redirect(toNode ? `${CONSOLE_PATH}/nodes/${id}` : CONSOLE_PATH, 303);
}
