import type { Context } from 'hono';
import { ApiError, type Answer, type ApiClient, type Schemas } from '@drydock/client';
import { idPattern } from '../domain/ids';
import type { AppEnv } from '../api/env';
import type { Fields } from './controls';
import { Problem } from './layout';
import type { Session } from './sessions';

/** Where the console lives; every page and form path starts with it. */
export const CONSOLE_PATH = '/console';

/** What every signed-in console request carries: its session, the API as its key, a POST's form. */
export interface ConsoleEnv {
  Variables: AppEnv['Variables'] & {
    session: Session;
    api: ApiClient;
    form: Fields;
  };
}
export type Ctx = Context<ConsoleEnv>;

/** The node id in the path, when it looks like one (anything else is a 404 page, never a call). */
export function nodeIdOf(c: Ctx): string | undefined {
  const id = c.req.param('id');
  return id && idPattern('node').test(id) ? id : undefined;
}

export function notFound(c: Ctx) {
  return c.html(
    <Problem
      title="Not found"
      message={`There is no console page at ${c.req.path}.`}
      session={c.var.session}
    />,
    404,
  );
}

/**
 * Opens a workflow in the Temporal UI the API was given (`DRYDOCK_TEMPORAL_UI_URL`); undefined
 * when none is configured, and the page shows the workflow id without a link.
 */
export function workflowUrlOf(c: Ctx): ((workflowId: string) => string) | undefined {
  const { temporalUiUrl, temporalNamespace } = c.var.deps;
  if (!temporalUiUrl) return undefined;
  const namespace = encodeURIComponent(temporalNamespace);
  return (workflowId) =>
    `${temporalUiUrl}/namespaces/${namespace}/workflows/${encodeURIComponent(workflowId)}`;
}

/** The page's query parameters among `names` that are set (not empty), as the page's filters. */
export function queryFilters<Name extends string>(
  c: Ctx,
  names: readonly Name[],
): Partial<Record<Name, string>> {
  const filters: Partial<Record<Name, string>> = {};
  for (const name of names) {
    const value = c.req.query(name);
    if (value) filters[name] = value;
  }
  return filters;
}

/** The message a change left for the next page, once. */
export function takeFlash(session: Session) {
  const flash = session.flash;
  session.flash = undefined;
  return flash;
}

/** The API's refusal of a listing, shown in the page in place of the list. */
export function refusedInPage(error: unknown): { problem: string; status: 400 | 403 | 404 } {
  if (error instanceof ApiError && [400, 403, 404].includes(error.status)) {
    return { problem: `${error.message} (${error.code})`, status: error.status as 400 | 403 | 404 };
  }
  throw error;
}

/** A pool's node counts per capacity bucket. */
export type Capacity = Answer<'get', '/v1/pools/{id}/capacity'>;

/** A pool with its capacity buckets; null when the capacity could not be read. */
export interface PoolWithCapacity {
  pool: Schemas['Pool'];
  capacity: Capacity | null;
}

/** The pools the key sees, each with its capacity. */
export async function poolsWithCapacity(api: ApiClient): Promise<PoolWithCapacity[]> {
  const pools = await api.GET('/v1/pools');
  const capacities = await Promise.all(
    pools.items.map((pool) =>
      api.GET('/v1/pools/{id}/capacity', { params: { path: { id: pool.id } } }).catch(() => null),
    ),
  );
  return pools.items.map((pool, i) => ({ pool, capacity: capacities[i] ?? null }));
}
