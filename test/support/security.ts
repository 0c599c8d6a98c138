import { expect } from 'vitest';
import { call, eventsOf, seedNode, seedPool, tenantKey } from './fixtures';
import type { Harness } from './harness';

/**
 * The security cases every node route must hold (docs/api.md, Authentication): no credential → 401;
 * a tenant key without the action → 403; a tenant key with the action on a node of a pool it
 * neither owns nor is granted → 404. In every case the node and its events stay as they were.
 */
export async function expectNodeRouteSecured(
  h: Harness,
  route: { method: string; path: (nodeId: string) => string; body?: unknown; action: string },
): Promise<void> {
  const suffix = Math.random().toString(36).slice(2, 8);
  const owner = `own-${suffix}`;
  const stranger = `str-${suffix}`;
  await seedPool(h, { id: `pool-${owner}`, tenantId: owner });
  await seedPool(h, { id: `pool-${stranger}`, tenantId: stranger });
  const own = await seedNode(h, { poolId: `pool-${owner}`, tenantId: owner });
  const foreign = await seedNode(h, { poolId: `pool-${stranger}`, tenantId: stranger });
  const allActions = await tenantKey(h, owner, [route.action, 'compute:nodes:read'], `all-${suffix}`);
  const readOnly = await tenantKey(h, owner, ['compute:nodes:read'], `ro-${suffix}`);
  const before = (await call(h, 'GET', `/v1/nodes/${own}`)).body;
  const foreignBefore = (await call(h, 'GET', `/v1/nodes/${foreign}`)).body;

  const anonymous = await call(h, route.method, route.path(own), { token: null, body: route.body });
  expect(anonymous.status, 'no credential').toBe(401);
  expect(anonymous.body.error.code).toBe('UNAUTHENTICATED');
  const unknown = await call(h, route.method, route.path(own), { token: 'ddk_unknown', body: route.body });
  expect(unknown.status, 'unknown credential').toBe(401);

  if (route.action !== 'compute:nodes:read') {
    const forbidden = await call(h, route.method, route.path(own), {
      token: readOnly.secret,
      body: route.body,
    });
    expect(forbidden.status, 'without the action').toBe(403);
    expect(forbidden.body.error).toMatchObject({ code: 'FORBIDDEN', details: { action: route.action } });
  }
  const hidden = await call(h, route.method, route.path(foreign), {
    token: allActions.secret,
    body: route.body,
  });
  expect(hidden.status, 'foreign node').toBe(404);
  expect(hidden.body.error.code).toBe('NOT_FOUND');

  expect((await call(h, 'GET', `/v1/nodes/${own}`)).body).toEqual(before);
  expect((await call(h, 'GET', `/v1/nodes/${foreign}`)).body).toEqual(foreignBefore);
  expect(await eventsOf(h, own)).toEqual([]);
  expect(await eventsOf(h, foreign)).toEqual([]);
}
