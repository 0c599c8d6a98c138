import { Hono } from 'hono';
import { isId } from '../../domain/ids';
import { parseSelector } from '../../domain/selector';
import { CONSOLE_PATH, notFound, refusedInPage, takeFlash, type ConsoleEnv } from '../context';
import { field } from '../controls';
import { TokensPage } from '../pages/tokens';
import { change } from './pools';

/** Join tokens: the list, creating one (its secret shown once), revoking one. */
export function tokenRoutes(): Hono<ConsoleEnv> {
  const router = new Hono<ConsoleEnv>();

  router.get('/tokens', async (c) => {
    const { api, session } = c.var;
    // The token the session just created, kept only until this page shows it: taken (and
    // forgotten) by one render, never put in a URL, gone with the session.
    const created = session.created;
    session.created = undefined;
    const [tokens, pools] = await Promise.all([
      api.GET('/v1/tokens').then((answer) => answer.items, refusedInPage),
      api.GET('/v1/pools'),
    ]);
    // A tenant key manages the tokens of its own pools only (granted pools are another's).
    const { caller } = session;
    const managed = pools.items.filter(
      (pool) => caller.kind === 'operator' || pool.tenantId === caller.tenantId,
    );
    return c.html(
      <TokensPage
        session={session}
        flash={takeFlash(session)}
        tokens={tokens}
        pools={managed.map((pool) => pool.id)}
        created={created}
        apiUrl={new URL(c.req.url).origin}
      />,
      'problem' in tokens ? tokens.status : 200,
    );
  });

  router.post('/tokens', async (c) => {
    const { api, form, session } = c.var;
    await change(c, 'Create token', async () => {
      const labels = parseSelector(field(form, 'labels') ?? '');
      if ('problem' in labels) throw new LabelsProblem(labels.problem);
      const maxUses = field(form, 'maxUses');
      const description = field(form, 'description');
      const token = await api.POST('/v1/tokens', {
        body: {
          poolId: field(form, 'poolId') ?? '',
          ttl: field(form, 'ttl') ?? '',
          // Not a number: sent as null, and the API says what it expects.
          maxUses: maxUses === undefined ? 0 : Number(maxUses),
          labels: labels.selector,
          ...(description ? { description } : {}),
        },
      });
      session.created = token;
      return `Token ${token.id} created for pool ${token.poolId}.`;
    }).catch((error: unknown) => {
      if (!(error instanceof LabelsProblem)) throw error;
      session.flash = { kind: 'error', text: `Create token refused: labels ${error.message}.` };
    });
    return c.redirect(`${CONSOLE_PATH}/tokens`, 303);
  });

  router.post('/tokens/:id/revoke', async (c) => {
    const { api, form, session } = c.var;
    const id = c.req.param('id');
    if (!isId('jt', id)) return notFound(c);
    if (field(form, 'confirm') !== 'yes') {
      session.flash = { kind: 'error', text: `Token ${id} not revoked: tick the box to confirm.` };
    } else {
      await change(c, 'Revoke', async () => {
        const token = await api.DELETE('/v1/tokens/{id}', { params: { path: { id } } });
        return `Token ${token.id} revoked: no more joins with it; nodes that joined stay.`;
      });
    }
    return c.redirect(`${CONSOLE_PATH}/tokens`, 303);
  });

  return router;
}

/** Labels that are not `KEY=VALUE[,…]`: the form's text could not become the API's object. */
class LabelsProblem extends Error {}
