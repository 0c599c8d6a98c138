import { Hono } from 'hono';
import { ApiError } from '@drydock/client';
import { CONSOLE_PATH, nodeIdOf, notFound, type ConsoleEnv } from '../context';
import { field } from '../controls';

/** Revoking a break-glass SSH certificate from the node page (docs/security.md#break-glass-ssh). */
export function sshRoutes(): Hono<ConsoleEnv> {
  const router = new Hono<ConsoleEnv>();

  router.post('/nodes/:id/ssh-certificates/:serial/revoke', async (c) => {
    const { api, session, form } = c.var;
    const id = nodeIdOf(c);
    const serial = c.req.param('serial');
    if (!id || !/^[1-9]\d{0,14}$/.test(serial)) return notFound(c);
    const page = `${CONSOLE_PATH}/nodes/${id}`;
    if (field(form, 'confirm') !== 'yes') {
      session.flash = { kind: 'error', text: 'Revoke needs its box ticked: nothing was done.' };
      return c.redirect(page, 303);
    }
    try {
      // The reason is required: an empty one goes as it is, and the API refuses it.
      const cert = await api.POST('/v1/nodes/{id}/ssh-certificates/{serial}/revoke', {
        params: { path: { id, serial } },
        body: { reason: field(form, 'reason') ?? '' },
      });
      session.flash = {
        kind: 'ok',
        text: `SSH certificate ${cert.serial} revoked: the node's agent puts it in sshd's KRL at its next refresh.`,
      };
    } catch (error) {
      if (!(error instanceof ApiError) || error.status === 401) throw error;
      session.flash = { kind: 'error', text: `Revoke refused: ${error.message} (${error.code})` };
    }
    return c.redirect(page, 303);
  });

  return router;
}
