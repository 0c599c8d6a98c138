import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GroupMap } from '../api/group-map';
import { newId } from '../domain/ids';
import { ACTIONS } from '../domain/principal';
import { startOidcProvider, type RunningOidcProvider } from '../scripts/services/oidc-provider';
import type { Reply } from './support/fixtures';
import { useHarness } from './support/harness';
import {
  createWorld,
  routeTable,
  send,
  settle,
  type Access,
  type Call,
  type Exemplar,
  type RouteSpec,
  type World,
} from './support/route-table';
import { signIn } from './support/oidc';
import { snapshot } from './support/snapshot';

// People signed in at a real OpenID provider call beside the keys: one whose group maps to
// operator, one whose group maps to the stranger tenant with every action, one in no mapped group.
let provider: RunningOidcProvider;
/** Filled once the world names its tenants; the API reads the map at each token. */
const groupMap: GroupMap = { 'fleet-ops': { role: 'operator' } };
const people: Partial<Record<'personOperator' | 'personStranger' | 'personUnmapped', string>> = {};
beforeAll(async () => {
  provider = await startOidcProvider({
    accessTokenTtlSeconds: 3600,
    people: [
      { email: 'op@example.com', name: 'Op', groups: ['fleet-ops'] },
      { email: 'str@example.com', name: 'Str', groups: ['stranger-team'] },
      { email: 'nobody@example.com', name: 'Nobody', groups: ['unmapped'] },
    ],
  });
});
afterAll(() => provider?.stop());

// The world's pool has short remediation attempts (test/support/route-table.ts).
const h = useHarness({
  oidc: () => ({
    issuer: provider.issuer,
    audience: provider.audience,
    groupsClaim: 'groups',
    clockSkewSeconds: 60,
    groupMap,
  }),
});

const CALLERS = [
  'none',
  'garbage',
  'revoked',
  'stranger',
  'grantee',
  'withoutAction',
  'pendingNode',
  'adoptedNode',
  'operator',
  'personOperator',
  'personStranger',
  'personUnmapped',
] as const;
type Caller = (typeof CALLERS)[number];

/** What a caller gets: the route's own answer, a refusal, or (strangers) 404 / nothing of the owner's. */
type Expected = 'allowed' | 'hidden' | 'filtered' | { status: 401 | 403; code: string };

const UNAUTHENTICATED = { status: 401, code: 'UNAUTHENTICATED' } as const;
const FORBIDDEN = { status: 403, code: 'FORBIDDEN' } as const;

function expected(access: Access, exemplar: Exemplar, caller: Caller): Expected {
  // A person is the principal their groups map to: answered as that key would be.
  if (caller === 'personOperator') return expected(access, exemplar, 'operator');
  if (caller === 'personStranger') return expected(access, exemplar, 'stranger');
  if (access.kind === 'public') return 'allowed';
  if (caller === 'personUnmapped') return FORBIDDEN;
  if (caller === 'none' || caller === 'garbage' || caller === 'revoked') return UNAUTHENTICATED;
  if (access.kind === 'agent') {
    if (caller === 'adoptedNode') return 'allowed';
    // A node nobody approved may say it is alive and wait for commands, nothing else.
    if (caller === 'pendingNode' && access.pending) return 'allowed';
    return FORBIDDEN;
  }
  if (caller === 'operator') return 'allowed';
  if (caller === 'pendingNode' || caller === 'adoptedNode' || caller === 'withoutAction') return FORBIDDEN;
  if (access.kind === 'operator') return FORBIDDEN;
  if (caller === 'grantee') return access.grantee === 'forbidden' ? FORBIDDEN : access.grantee;
  return exemplar.named ? 'hidden' : 'filtered';
}

function token(world: World, access: Access, caller: Caller): Promise<string | null> | string | null {
  switch (caller) {
    case 'none':
      return null;
    case 'garbage':
      return `ddk_${randomBytes(32).toString('base64url')}`;
    case 'revoked':
      return world.revokedKey;
    case 'stranger':
      return world.strangerKey;
    case 'grantee':
      return world.granteeKey;
    case 'withoutAction':
      return access.kind === 'tenant' ? world.keyWithout(access.action) : world.ownerKey;
    case 'pendingNode':
      return world.pending.credential;
    case 'adoptedNode':
      return world.agent.credential;
    case 'operator':
      return h.operatorKey;
    case 'personOperator':
    case 'personStranger':
    case 'personUnmapped':
      return people[caller]!;
  }
}

/** The same call naming a missing object: a missing id of the same form in the path by default. */
function missingCall(exemplar: Exemplar, c: Call): Call {
  if (exemplar.named?.missing) return exemplar.named.missing(c);
  const id = c.params?.id;
  if (!id) throw new Error('a named route without a path id needs named.missing');
  const prefix = /^([a-z]+)_[0-9a-z]{26}$/.exec(id)?.[1];
  return { ...c, params: { ...c.params, id: prefix ? newId(prefix as 'node') : `missing-${id}` } };
}

/** Values of `a` that `b` holds elsewhere-equal but different: the ids the two calls name. */
function namedValues(a: Call, b: Call): [string, string][] {
  const flat = (c: Call) => ({ ...c.params, ...((c.body as Record<string, unknown> | undefined) ?? {}) });
  const left = flat(a);
  const right = flat(b);
  return Object.keys(left)
    .filter((k) => typeof left[k] === 'string' && left[k] !== right[k])
    .map((k) => [left[k] as string, String(right[k])]);
}

/** An error body without its request id and with the named id replaced: what a caller can compare. */
function comparable(reply: Reply, named: string): string {
  const { requestId, ...error } = reply.body.error;
  expect(requestId).toMatch(/^req_/);
  return JSON.stringify(error).replaceAll(named, '<named>');
}

interface Cell {
  caller: Caller;
  want: Expected;
  call: Call;
  token: string | null;
}

async function prepare(world: World, exemplar: Exemplar, caller: Caller): Promise<Cell> {
  return {
    caller,
    want: expected(exemplar.access, exemplar, caller),
    call: await exemplar.build(world),
    token: await token(world, exemplar.access, caller),
  };
}

async function answer(world: World, route: RouteSpec, exemplar: Exemplar, cell: Cell): Promise<void> {
  const { want, call: c, token: presented } = cell;
  const label = `${route.key} as ${cell.caller}`;
  if (want === 'hidden') {
    const asStranger = exemplar.named?.stranger?.(c, world) ?? c;
    const missing = missingCall(exemplar, asStranger);
    const hidden = await send(h, route, asStranger, presented);
    const absent = await send(h, route, missing, presented);
    expect(hidden.status, `${label}: ${JSON.stringify(hidden.body)}`).toBe(404);
    expect(absent.status, `${label} (missing): ${JSON.stringify(absent.body)}`).toBe(404);
    const pairs = namedValues(asStranger, missing);
    expect(pairs, `${label}: the two calls differ in the id they name`).toHaveLength(1);
    const [[ownerId, missingId]] = pairs as [[string, string]];
    expect(comparable(hidden, ownerId), label).toBe(comparable(absent, missingId));
    return;
  }
  const reply = await send(h, route, c, presented);
  const shown = `${label}: ${reply.status} ${JSON.stringify(reply.body).slice(0, 300)}`;
  if (want === 'allowed' || want === 'filtered') {
    expect(reply.status, shown).toBe(exemplar.status);
    if (want === 'filtered') {
      const text = JSON.stringify(reply.body);
      for (const id of world.ownerIds) expect(text, `${label} shows ${id}`).not.toContain(id);
    }
    return;
  }
  expect(reply.status, shown).toBe(want.status);
  expect(reply.body.error.code, shown).toBe(want.code);
  expect(reply.body.error.requestId, shown).toMatch(/^req_/);
  if (want.status === 403 && exemplar.access.kind === 'tenant' && cell.caller === 'withoutAction') {
    expect(reply.body.error.details, shown).toEqual({ action: exemplar.access.action });
  }
}

/** Runs `check`, keeping its failure: the matrix reports every wrong cell, not the first. */
async function collect(failures: string[], check: () => Promise<void>): Promise<void> {
  try {
    await check();
  } catch (error) {
    failures.push((error as Error).message.split('\n')[0]!);
  }
}

describe('authorization matrix', () => {
  it('has an exemplar for every route the app serves, and none for a route it does not', () => {
    expect(() => routeTable(h.app)).not.toThrow();
  });

  it('every route answers every kind of caller as the credential rules say; refusals change nothing', async () => {
    const table = routeTable(h.app);
    const world = await createWorld(h);
    groupMap['stranger-team'] = { role: 'tenant', tenantId: world.stranger, actions: [...ACTIONS] };
    people.personOperator = (await signIn(provider, 'op@example.com')).accessToken;
    people.personStranger = (await signIn(provider, 'str@example.com')).accessToken;
    people.personUnmapped = (await signIn(provider, 'nobody@example.com')).accessToken;
    await world.operation();
    // The set-up's drain ends before anything is compared.
    await settle(h);
    const failures: string[] = [];
    let cells = 0;
    for (const { route, exemplar } of table) {
      const cellsOfRoute = await Promise.all(CALLERS.map((caller) => prepare(world, exemplar, caller)));
      // Every answer but the right caller's is a refusal or a read: none may change anything.
      const quiet = cellsOfRoute.filter((cell) => cell.want !== 'allowed');
      const before = await snapshot(h);
      for (const cell of quiet) await collect(failures, () => answer(world, route, exemplar, cell));
      const after = await snapshot(h);
      await collect(failures, async () =>
        expect(after, `${route.key}: refusals changed nothing`).toEqual(before),
      );
      for (const cell of cellsOfRoute.filter((c) => c.want === 'allowed')) {
        await collect(failures, () => answer(world, route, exemplar, cell));
      }
      cells += cellsOfRoute.length;
      await settle(h);
    }
    expect(failures).toEqual([]);
    expect(cells).toBe(table.length * CALLERS.length);
  }, 600_000);
});
