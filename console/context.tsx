import type { Context } from 'hono';
import { ApiError, type ApiClient } from '../client';
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
  const { temporalUiUrl, temporal } = c.var.deps;
  if (!temporalUiUrl) return undefined;
  const namespace = encodeURIComponent(temporal.options.namespace);
  return (workflowId) =>
    `${temporalUiUrl}/namespaces/${namespace}/workflows/${encodeURIComponent(workflowId)}`;
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
