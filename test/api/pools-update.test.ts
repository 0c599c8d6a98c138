import { and, eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { events } from '../../db/schema';
import { call, seedPool, tenantKey } from '../support/fixtures';
import { useHarness } from '../support/harness';

const h = useHarness({ worker: false });

const patch = (id: string, body: unknown, options: { token?: string; ifMatch?: string } = {}) =>
  call(h, 'PATCH', `/v1/pools/${id}`, {
    body,
    token: options.token,
    headers: options.ifMatch === undefined ? {} : { 'if-match': options.ifMatch },
  });

/** The `pool.updated` events of one pool, oldest first. */
const poolUpdates = (poolId: string) =>
  h.db
    .select()
    .from(events)
    .where(and(eq(events.type, 'pool.updated'), sql`${events.data}->>'poolId' = ${poolId}`))
    .orderBy(events.id);

const REMEDIATION = {
  GpuXidError: { ladder: ['reset-accelerator', 'reboot'], attemptTimeout: '5m' },
  NicFlap: { ladder: ['reset-nic'] },
};

async function freshPool(id: string) {
  await seedPool(h, {
    id,
    tenantId: 'acme',
    grants: ['globex'],
    kind: 'provider',
    policy: { lostAfter: '10m', maxUnavailable: 1, remediation: REMEDIATION },
  });
  const read = await call(h, 'GET', `/v1/pools/${id}`);
  expect(read.body.version).toBe(1);
  return read.body;
}

describe('PATCH /v1/pools/{id}: happy', () => {
  it('sets what is given, removes what is null, keeps the rest; one event with what changed', async () => {
    await freshPool('pool-u1');
    const reply = await patch(
      'pool-u1',
      {
        grants: ['globex', 'initech'],
        policy: {
          maxUnavailable: '25%',
          maxUnhealthy: 3,
          lostAfter: null,
          remediation: { GpuXidError: { attemptTimeout: null, healthyAfter: '30s' }, NicFlap: null },
        },
        reason: 'rack b7 roll-out',
      },
      { ifMatch: '"1"' },
    );
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      id: 'pool-u1',
      tenantId: 'acme',
      version: 2,
      grants: ['globex', 'initech'],
      policy: {
        maxUnavailable: '25%',
        maxUnhealthy: 3,
        remediation: { GpuXidError: { ladder: ['reset-accelerator', 'reboot'], healthyAfter: '30s' } },
      },
    });
    expect(reply.body.policy).not.toHaveProperty('lostAfter');
    expect(reply.body.policy.remediation).not.toHaveProperty('NicFlap');
    expect(reply.body.policy.remediation.GpuXidError).not.toHaveProperty('attemptTimeout');
    expect((await call(h, 'GET', '/v1/pools/pool-u1')).body).toEqual(reply.body);

    const [event, ...more] = await poolUpdates('pool-u1');
    expect(more).toEqual([]);
    expect(event).toMatchObject({
      nodeId: null,
      tenantId: 'acme',
      actor: 'key:bootstrap-operator',
      reason: 'rack b7 roll-out',
      data: {
        poolId: 'pool-u1',
        version: 2,
        after: {
          grants: ['globex', 'initech'],
          policy: {
            maxUnavailable: '25%',
            maxUnhealthy: 3,
            lostAfter: null,
            remediation: { GpuXidError: { attemptTimeout: null, healthyAfter: '30s' }, NicFlap: null },
          },
        },
        before: {
          grants: ['globex'],
          policy: {
            maxUnavailable: 1,
            maxUnhealthy: null,
            lostAfter: '10m',
            remediation: {
              GpuXidError: { attemptTimeout: '5m', healthyAfter: null },
              NicFlap: { ladder: ['reset-nic'] },
            },
          },
        },
      },
    });
    // The event is the operators' (no node): the fleet feed shows it to them.
    const feed = await call(h, 'GET', '/v1/events?type=pool.');
    expect(feed.body.items.map((e: { type: string }) => e.type)).toEqual(['pool.updated']);
  });

  it('changes nothing, bumps nothing and writes no event when the patch is what the pool has', async () => {
    const before = await freshPool('pool-u2');
    for (const body of [
      {},
      { policy: {} },
      { grants: ['globex'], policy: { maxUnavailable: 1, maxUnhealthy: null, remediation: {} } },
      // Key order does not count.
      {
        policy: {
          remediation: { GpuXidError: { attemptTimeout: '5m', ladder: ['reset-accelerator', 'reboot'] } },
        },
      },
    ]) {
      const reply = await patch('pool-u2', body, { ifMatch: '1' });
      expect(reply.status, JSON.stringify(body)).toBe(200);
      expect(reply.body, JSON.stringify(body)).toEqual(before);
    }
    expect(await poolUpdates('pool-u2')).toEqual([]);
  });

  it('applies to the pool as it is now without If-Match; each change bumps the version', async () => {
    await freshPool('pool-u3');
    expect((await patch('pool-u3', { policy: { maxUnavailable: 2 } })).body.version).toBe(2);
    const second = await patch('pool-u3', { grants: [] }, { ifMatch: '2' });
    expect(second.body).toMatchObject({ version: 3, grants: [], policy: { maxUnavailable: 2 } });
    expect((await poolUpdates('pool-u3')).map((e) => e.data)).toEqual([
      {
        poolId: 'pool-u3',
        version: 2,
        before: { policy: { maxUnavailable: 1 } },
        after: { policy: { maxUnavailable: 2 } },
      },
      { poolId: 'pool-u3', version: 3, before: { grants: ['globex'] }, after: { grants: [] } },
    ]);
    // A tenant granted the pool no longer sees it.
    const globex = await tenantKey(h, 'globex', ['compute:nodes:read'], 'globex-reader');
    expect((await call(h, 'GET', '/v1/pools/pool-u3', { token: globex.secret })).status).toBe(404);
  });
});

describe('PATCH /v1/pools/{id}: errors', () => {
  it('refuses a stale version with CONFLICT and currentVersion, changing nothing', async () => {
    await freshPool('pool-e1');
    await patch('pool-e1', { policy: { maxUnavailable: 2 } });
    const stale = await patch('pool-e1', { policy: { maxUnavailable: 5 } }, { ifMatch: '"1"' });
    expect(stale.status).toBe(409);
    expect(stale.body.error).toMatchObject({
      code: 'CONFLICT',
      message: 'pool changed since version 1 (now 2)',
      details: { currentVersion: 2 },
    });
    // Stale even when the patch would change nothing: the caller decided on what it read.
    expect((await patch('pool-e1', {}, { ifMatch: '1' })).status).toBe(409);
    const now = (await call(h, 'GET', '/v1/pools/pool-e1')).body;
    expect(now).toMatchObject({ version: 2, policy: { maxUnavailable: 2 } });
    expect(await poolUpdates('pool-e1')).toHaveLength(1);
  });

  it('refuses bad input with the schemas of POST /v1/pools, before anything changes', async () => {
    const before = await freshPool('pool-e2');
    const bad: [string, unknown, string?][] = [
      ['a policy field unknown', { policy: { surprise: 1 } }],
      ['a field unknown', { kind: 'vps-host' }],
      ['a percent over 100', { policy: { maxUnhealthy: '140%' } }],
      ['a negative budget', { policy: { maxUnavailable: -1 } }],
      ['lostAfter not a duration', { policy: { lostAfter: 'later' } }],
      ['lostAfter over 30d', { policy: { lostAfter: '31d' } }],
      ['an empty ladder', { policy: { remediation: { GpuXidError: { ladder: [] } } } }],
      [
        'a ladder with a bad action',
        { policy: { remediation: { GpuXidError: { ladder: ['Reboot Now'] } } } },
      ],
      ['a bad condition type', { policy: { remediation: { 'gpu-xid': { ladder: ['reboot'] } } } }],
      ['attemptTimeout 0', { policy: { remediation: { GpuXidError: { attemptTimeout: '0s' } } } }],
      ['an unknown remediation field', { policy: { remediation: { GpuXidError: { retries: 3 } } } }],
      ['grants null', { grants: null }],
      ['a grant not a slug', { grants: ['Globex'] }],
      ['65 grants', { grants: Array.from({ length: 65 }, (_, i) => `t${i}`) }],
      ['policy null', { policy: null }],
      ['an empty reason', { reason: '' }],
      ['If-Match not a version', { policy: { maxUnavailable: 2 } }, 'v1'],
    ];
    for (const [what, body, ifMatch] of bad) {
      const reply = await patch('pool-e2', body, { ifMatch });
      expect(reply.status, what).toBe(400);
      expect(reply.body.error.code, what).toBe('INVALID_INPUT');
    }
    // The 64 condition types are counted on the policy the patch leaves, as on a created pool.
    const types = (n: number, from = 0) =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`Fault${from + i}`, { ladder: ['reboot'] }]));
    const over = await patch('pool-e2', { policy: { remediation: types(63) } });
    expect(over.status).toBe(400);
    expect(over.body.error.message).toContain('at most 64 condition types');
    expect((await call(h, 'GET', '/v1/pools/pool-e2')).body).toEqual(before);
    expect(await poolUpdates('pool-e2')).toEqual([]);
    expect(
      (await patch('pool-e2', { policy: { remediation: { ...types(62), NicFlap: null } } })).status,
    ).toBe(200);
  });

  it('answers 404 for a pool that does not exist, 400 for an id of the wrong form', async () => {
    const missing = await patch('pool-nope', { policy: { maxUnavailable: 2 } });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toMatchObject({ code: 'NOT_FOUND', details: { poolId: 'pool-nope' } });
    expect((await patch('Pool_Bad', { policy: { maxUnavailable: 2 } })).status).toBe(400);
  });
});

describe('PATCH /v1/pools/{id}: security', () => {
  it('is for operators only: a tenant key, even the owner’s with every action, changes nothing', async () => {
    const before = await freshPool('pool-s1');
    const owner = await tenantKey(
      h,
      'acme',
      ['compute:nodes:read', 'compute:nodes:update', 'compute:nodes:drain', 'compute:nodes:remediate'],
      'acme-all',
    );
    const refused = await patch('pool-s1', { policy: { maxUnavailable: 50 } }, { token: owner.secret });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('FORBIDDEN');
    const stranger = await tenantKey(h, 'initech', ['compute:nodes:read'], 'initech-reader');
    expect((await patch('pool-s1', { grants: ['initech'] }, { token: stranger.secret })).status).toBe(403);
    expect((await call(h, 'PATCH', '/v1/pools/pool-s1', { token: null, body: { grants: [] } })).status).toBe(
      401,
    );
    expect((await call(h, 'GET', '/v1/pools/pool-s1')).body).toEqual(before);
    expect(await poolUpdates('pool-s1')).toEqual([]);
  });
});
