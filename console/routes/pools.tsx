import { Hono } from 'hono';
import { ApiError, type ApiClient } from '@drydock/client';
import { SLUG_PATTERN } from '../../domain/ids';
import { OPEN_OPERATION_STATUSES } from '../../domain/operation-status';
import { parseStep, type MaintenanceStep } from '../../domain/maintenance';
import { patchBetween, type PoolSettings } from '../../domain/pool';
import {
  CONSOLE_PATH,
  notFound,
  poolsWithCapacity,
  takeFlash,
  workflowUrlOf,
  type ConsoleEnv,
  type Ctx,
} from '../context';
import { field, fieldsSet, type Fields } from '../controls';
import { PoolPage } from '../pages/pool';
import { PoolsPage } from '../pages/pools';
import { readRolling, type Rolling } from '../rolling';

/** How many of a pool's nodes its page lists (the fleet page, filtered by pool, has them all). */
const POOL_NODES_SHOWN = 20;
/** How many of a pool's recent drains its page lists (an open one is always the newest). */
const RECENT_POOL_DRAINS = 10;

/** The pools list, a pool's page, its pool drain's start (its cancel is the operation's) and the start of a rolling maintenance. */
export function poolRoutes(): Hono<ConsoleEnv> {
  const router = new Hono<ConsoleEnv>();

  router.get('/pools', async (c) => {
    const { api, session } = c.var;
    const [pools, pending, running] = await Promise.all([
      poolsWithCapacity(api),
      api.GET('/v1/operations', { params: { query: { kind: 'pool-drain', status: 'pending' } } }),
      api.GET('/v1/operations', { params: { query: { kind: 'pool-drain', status: 'running' } } }),
    ]);
    const drains = [...pending.items, ...running.items];
    return c.html(
      <PoolsPage
        session={session}
        flash={takeFlash(session)}
        pools={pools}
        draining={new Map(drains.map((op) => [op.poolId ?? '', op]))}
      />,
    );
  });

  router.get('/pools/:id', async (c) => {
    const { api, session } = c.var;
    const id = poolIdOf(c);
    if (!id) return notFound(c);
    const path = { path: { id } };
    const pool = await api.GET('/v1/pools/{id}', { params: path });
    const history = (window: '24h' | '7d') =>
      api.GET('/v1/pools/{id}/capacity/history', { params: { ...path, query: { window } } });
    const [capacity, day, week, nodes, drains, rolling] = await Promise.all([
      api.GET('/v1/pools/{id}/capacity', { params: path }),
      history('24h'),
      history('7d'),
      api.GET('/v1/nodes', { params: { query: { poolId: id, limit: POOL_NODES_SHOWN } } }),
      poolDrainsOf(api, id),
      latestRollingOf(api, id),
    ]);
    const open = drains.find((op) => OPEN_OPERATION_STATUSES.includes(op.status));
    // The list has no progress: the running drain read on its own carries it.
    const running = open ? await api.GET('/v1/operations/{id}', { params: { path: { id: open.id } } }) : null;
    return c.html(
      <PoolPage
        session={session}
        flash={takeFlash(session)}
        pool={pool}
        capacity={capacity}
        history={[day, week]}
        now={Date.now()}
        nodes={{ items: nodes.items, more: nodes.nextCursor !== null }}
        running={running}
        drains={drains}
        rolling={rolling}
        workflowUrl={workflowUrlOf(c)}
      />,
    );
  });

  router.post('/pools/:id/drain', async (c) => {
    const { api, form } = c.var;
    const id = poolIdOf(c);
    if (!id) return notFound(c);
    const refused = await change(c, 'Pool drain', async () => {
      const maxConcurrent = field(form, 'maxConcurrent');
      const selector = field(form, 'selector');
      const deadline = field(form, 'deadline');
      const { operation } = await api.POST('/v1/pools/{id}/drain', {
        params: { path: { id } },
        body: {
          // The reason is required: an empty one goes as it is, and the API refuses it.
          reason: field(form, 'reason') ?? '',
          ...(selector ? { selector } : {}),
          // Not a number: sent as null, and the API says what it expects.
          ...(maxConcurrent ? { maxConcurrent: Number(maxConcurrent) } : {}),
          ...(deadline ? { deadline } : {}),
        },
      });
      return `Pool ${id} draining ${selector ? `the nodes with ${selector}` : 'every node'}: operation ${operation.id} is ${operation.status}.`;
    });
    // A pool the key cannot see has no page to go back to: the list says why.
    return c.redirect(`${CONSOLE_PATH}/pools${refused?.status === 404 ? '' : `/${id}`}`, 303);
  });

  router.post('/pools/:id/maintenance', async (c) => {
    const { api, form, session } = c.var;
    const id = poolIdOf(c);
    if (!id) return notFound(c);
    const steps = stepsOf(field(form, 'steps') ?? '');
    if (typeof steps === 'string') {
      session.flash = { kind: 'error', text: `Rolling maintenance refused: ${steps}; nothing was sent.` };
      return c.redirect(`${CONSOLE_PATH}/pools/${id}`, 303);
    }
    const refused = await change(c, 'Rolling maintenance', async () => {
      const selector = field(form, 'selector');
      const idempotencyKey = field(form, 'idempotencyKey');
      // A count not made of digits goes as NaN (null in JSON): the API says what it expects.
      const counts = Object.fromEntries(
        Object.entries(fieldsSet(form, ['maxConcurrent', 'maxFailures'])).map(([name, value]) => [
          name,
          Number(value),
        ]),
      );
      const { operation } = await api.POST('/v1/pools/{id}/maintenance', {
        params: { path: { id }, header: idempotencyKey ? { 'idempotency-key': idempotencyKey } : {} },
        body: {
          // The reason is required: an empty one goes as it is, and the API refuses it.
          reason: field(form, 'reason') ?? '',
          steps,
          ...(selector ? { selector } : {}),
          ...counts,
          ...fieldsSet(form, ['rebootTimeout', 'healthyAfter', 'verifyTimeout']),
        },
      });
      return `Rolling maintenance of ${selector ? `the nodes with ${selector}` : 'every node'} in pool ${id}: operation ${operation.id} is ${operation.status}.`;
    });
    return c.redirect(`${CONSOLE_PATH}/pools${refused?.status === 404 ? '' : `/${id}`}`, 303);
  });

  router.post('/pools/:id/update', async (c) => {
    const { api, form, session } = c.var;
    const id = poolIdOf(c);
    if (!id) return notFound(c);
    const wanted = settingsOf(form);
    if (typeof wanted === 'string') {
      session.flash = { kind: 'error', text: `Pool update refused: ${wanted}; nothing was sent.` };
      return c.redirect(`${CONSOLE_PATH}/pools/${id}`, 303);
    }
    const refused = await change(c, 'Pool update', async () => {
      const version = field(form, 'version');
      const header = version === undefined ? {} : { 'if-match': version };
      // The form shows the whole of each field: what differs from the pool at the version the page
      // was read at is the change (the API refuses it as CONFLICT if the pool moved on since).
      const pool = await api.GET('/v1/pools/{id}', { params: { path: { id } } });
      const patch = patchBetween({ grants: pool.grants, policy: pool.policy }, wanted);
      const reason = field(form, 'reason');
      const updated = await api.PATCH('/v1/pools/{id}', {
        params: { path: { id }, header },
        body: { ...patch, ...(reason ? { reason } : {}) },
      });
      return updated.version === pool.version
        ? `Pool ${id}: nothing to change.`
        : `Pool ${id} updated: version ${updated.version}.`;
    });
    return c.redirect(`${CONSOLE_PATH}/pools${refused?.status === 404 ? '' : `/${id}`}`, 303);
  });

  return router;
}

/**
 * The grants and policy the pool form asks for: an empty field is its default (not set). A limit
 * of digits is a count, anything else goes as written and the API says what it expects. Answers
 * what is wrong when the remediation is not a JSON object.
 */
function settingsOf(form: Fields): PoolSettings | string {
  const policy: PoolSettings['policy'] = {};
  const limit = (value: string) => (/^\d+$/.test(value) ? Number(value) : value);
  const maxUnavailable = field(form, 'maxUnavailable');
  const maxUnhealthy = field(form, 'maxUnhealthy');
  const lostAfter = field(form, 'lostAfter');
  const remediation = field(form, 'remediation');
  if (maxUnavailable) policy.maxUnavailable = limit(maxUnavailable);
  if (maxUnhealthy) policy.maxUnhealthy = limit(maxUnhealthy);
  if (lostAfter) policy.lostAfter = lostAfter;
  if (remediation) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(remediation);
    } catch {
      return 'remediation is not JSON';
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      return 'remediation is a JSON object, by condition type';
    }
    policy.remediation = parsed as NonNullable<PoolSettings['policy']['remediation']>;
  }
  const grants = (field(form, 'grants') ?? '').split(/[\s,]+/).filter((t) => t !== '');
  return { grants, policy };
}

/** The pool id in the path, when it has the shape the API accepts (else a 404 page, never a call). */
function poolIdOf(c: Ctx): string | undefined {
  const id = c.req.param('id');
  return id && SLUG_PATTERN.test(id) ? id : undefined;
}

/**
 * The steps of the form, one a line as `drydock pools maintain --step` takes them (`drain:2h`,
 * `run:driver-upgrade`, `reboot`, …); what is wrong with the first that is not a step.
 */
function stepsOf(text: string): MaintenanceStep[] | string {
  const lines = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
  if (lines.length === 0) return 'no steps';
  const steps: MaintenanceStep[] = [];
  for (const [i, line] of lines.entries()) {
    const step = parseStep(line);
    if (!step) {
      return `line ${i + 1} (${line.slice(0, 64)}) is not a step: drain[:deadline], run:<action>[:k=v,…], reboot, verify[:<action>] or uncordon`;
    }
    steps.push(step);
  }
  return steps;
}

/** The pool's running or latest rolling maintenance, with its node maintenances; null when none. */
async function latestRollingOf(api: ApiClient, poolId: string): Promise<Rolling | null> {
  const [latest] = (
    await api.GET('/v1/operations', { params: { query: { poolId, kind: 'pool-maintenance', limit: 1 } } })
  ).items;
  if (!latest) return null;
  // The list has no progress: read on its own, it carries the nodes and their maintenances.
  return readRolling(api, await api.GET('/v1/operations/{id}', { params: { path: { id: latest.id } } }));
}

/** The pool's recent drains, newest first. */
async function poolDrainsOf(api: ApiClient, poolId: string) {
  const recent = await api.GET('/v1/operations', {
    params: { query: { kind: 'pool-drain', poolId, limit: RECENT_POOL_DRAINS } },
  });
  return recent.items;
}

/**
 * Runs one change and leaves its flash: what it did, or the API's refusal as
 * "`<what>` refused: message (CODE)"; answers the refusal, if any.
 */
export async function change(
  c: Ctx,
  what: string,
  run: () => Promise<string>,
): Promise<ApiError | undefined> {
  const { session } = c.var;
  try {
    session.flash = { kind: 'ok', text: await run() };
    return undefined;
  } catch (error) {
    if (!(error instanceof ApiError) || error.status === 401) throw error;
    session.flash = { kind: 'error', text: `${what} refused: ${error.message} (${error.code})` };
    return error;
  }
}
