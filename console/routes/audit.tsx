import { Hono } from 'hono';
import { parseDuration } from '../../domain/duration';
import { queryFilters, refusedInPage, takeFlash, type ConsoleEnv } from '../context';
import { AUDIT_FILTERS, AuditPage, type AuditFilters } from '../pages/audit';

/**
 * The audit page (operators: the API refuses any other key, and the page shows its refusal).
 * `since` may also be a duration ago (24h), as `drydock audit --since` takes it.
 */
export function auditRoutes(): Hono<ConsoleEnv> {
  const router = new Hono<ConsoleEnv>();
  router.get('/audit', async (c) => {
    const { api, session } = c.var;
    const filters: AuditFilters = queryFilters(c, AUDIT_FILTERS);
    const cursor = c.req.query('cursor');
    const ago = filters.since === undefined ? null : parseDuration(filters.since);
    const since = ago === null ? filters.since : new Date(Date.now() - ago).toISOString();
    const audit = await api
      // The filters go as the page's query has them: the API validates them and its refusal shows.
      .GET('/v1/audit', {
        params: {
          query: { ...filters, ...(since ? { since } : {}), ...(cursor ? { cursor } : {}), limit: 50 },
        },
      })
      .catch(refusedInPage);
    return c.html(
      <AuditPage session={session} flash={takeFlash(session)} filters={filters} audit={audit} />,
      'problem' in audit ? audit.status : 200,
    );
  });
  return router;
}
