import { Hono } from 'hono';
import { ApiError } from '@drydock/client';
import { idPattern } from '../../domain/ids';
import { CONSOLE_PATH, nodeIdOf, notFound, takeFlash, type ConsoleEnv, type Ctx } from '../context';
import { field } from '../controls';
import { CommandPage } from '../pages/commands';

const ARG = 'arg.';

/** A command's id in the path, when it looks like one (anything else is a 404 page, never a call). */
function commandIdOf(c: Ctx): string | undefined {
  const id = c.req.param('id');
  return id && idPattern('cmd').test(id) ? id : undefined;
}

/**
 * Node commands (docs/lifecycle/commands.md): the run form's POST, a command's page, its output's
 * downloads and its cancel. Every path spelled out (see the node routes on Hono's router).
 */
export function commandRoutes(): Hono<ConsoleEnv> {
  const router = new Hono<ConsoleEnv>();

  router.post('/nodes/:id/commands', async (c) => {
    const { api, session, form } = c.var;
    const id = nodeIdOf(c);
    if (!id) return notFound(c);
    const action = field(form, 'action') ?? '';
    const args: Record<string, string> = {};
    for (const name of Object.keys(form)) {
      const value = field(form, name);
      if (name.startsWith(ARG) && value !== undefined) args[name.slice(ARG.length)] = value;
    }
    const idempotencyKey = field(form, 'idempotencyKey');
    try {
      // The reason is required: an empty one goes as it is, and the API refuses it.
      const command = await api.POST('/v1/nodes/{id}/commands', {
        params: { path: { id }, header: idempotencyKey ? { 'idempotency-key': idempotencyKey } : {} },
        body: { action, args, reason: field(form, 'reason') ?? '' },
      });
      session.flash = { kind: 'ok', text: `${action}: command ${command.id} is ${command.status}.` };
      return c.redirect(`${CONSOLE_PATH}/commands/${command.id}`, 303);
    } catch (error) {
      if (!(error instanceof ApiError) || error.status === 401) throw error;
      session.flash = { kind: 'error', text: `${action} refused: ${error.message} (${error.code})` };
      return c.redirect(`${CONSOLE_PATH}/nodes/${id}`, 303);
    }
  });

  router.get('/commands/:id', async (c) => {
    const { api, session } = c.var;
    const id = commandIdOf(c);
    if (!id) return notFound(c);
    const command = await api.GET('/v1/commands/{id}', { params: { path: { id } } });
    const node = await api.GET('/v1/nodes/{id}', { params: { path: { id: command.nodeId } } });
    return c.html(<CommandPage session={session} flash={takeFlash(session)} node={node} command={command} />);
  });

  // Each stream as the API keeps it (UTF-8 text), as a file: never rendered by the browser.
  for (const stream of ['stdout', 'stderr'] as const) {
    router.get(`/commands/:id/${stream}`, async (c) => {
      const id = commandIdOf(c);
      if (!id) return notFound(c);
      const command = await c.var.api.GET('/v1/commands/{id}', { params: { path: { id } } });
      return c.body(command.output?.[stream] ?? '', 200, {
        'content-type': 'text/plain; charset=utf-8',
        'content-disposition': `attachment; filename="${id}-${stream}.txt"`,
      });
    });
  }

  router.post('/commands/:id/cancel', async (c) => {
    const { api, session, form } = c.var;
    const id = commandIdOf(c);
    if (!id) return notFound(c);
    const page = `${CONSOLE_PATH}/commands/${id}`;
    if (field(form, 'confirm') !== 'yes') {
      session.flash = {
        kind: 'error',
        text: 'Cancel needs its box ticked: nothing was done.',
      };
      return c.redirect(page, 303);
    }
    try {
      const command = await api.DELETE('/v1/commands/{id}', { params: { path: { id } } });
      session.flash = { kind: 'ok', text: `Command ${command.id} is ${command.status}.` };
    } catch (error) {
      if (!(error instanceof ApiError) || error.status === 401) throw error;
      session.flash = { kind: 'error', text: `Cancel refused: ${error.message} (${error.code})` };
    }
    return c.redirect(page, 303);
  });

  return router;
}
