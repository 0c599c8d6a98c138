import { describe, expect, it } from 'vitest';
import { seedPoolNode, setNode } from './support/builders';
import { line, readNode, useCli } from './support/cli';
import { call, eventsOf, seedPool, tenantKey } from './support/fixtures';
import { useHarness } from './support/harness';

const h = useHarness({ worker: false });
const cli = useCli(h);
const { drydock } = cli;

const poolOf = async (id: string) => (await call(h, 'GET', `/v1/pools/${id}`)).body;

describe('drydock pools update', () => {
  it('sets, resets and merges policy fields; prints the pool with its new version', async () => {
    await seedPool(h, {
      id: 'pool-cu1',
      tenantId: 'acme',
      policy: { lostAfter: '10m', remediation: { NicFlap: { ladder: ['reset-nic'] } } },
    });
    const run = await drydock(
      line('pools update', 'pool-cu1', {
        'max-unavailable': '25%',
        'max-unhealthy': 3,
        reset: 'lost-after',
        remediation: '{"GpuXidError":{"attemptTimeout":"5m"},"NicFlap":null}',
        'if-version': 1,
        reason: 'rack b7 roll-out',
      }),
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^Version: +2$/m);
    expect(run.stdout).toContain('maxUnavailable=25%');
    expect(await poolOf('pool-cu1')).toMatchObject({
      version: 2,
      policy: {
        maxUnavailable: '25%',
        maxUnhealthy: 3,
        remediation: { GpuXidError: { attemptTimeout: '5m' } },
      },
    });
    expect((await poolOf('pool-cu1')).policy).not.toHaveProperty('lostAfter');
  });

  it('adds and takes back grants from the list as read; --json prints the pool', async () => {
    await seedPool(h, { id: 'pool-cu2', tenantId: 'acme', grants: ['globex', 'initech'] });
    const run = await drydock(
      line('pools update', 'pool-cu2', {
        grant: ['umbrella', 'globex'],
        'revoke-grant': 'initech',
        json: true,
      }),
    );
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      id: 'pool-cu2',
      version: 2,
      grants: ['globex', 'umbrella'],
    });
    // Nothing to change: the same pool back, no new version.
    const again = await drydock(line('pools update', 'pool-cu2', { grant: 'umbrella', json: true }));
    expect(JSON.parse(again.stdout).version).toBe(2);
  });

  it('exits 3 on a stale --if-version, 4 on an unknown pool, 5 for a tenant key: changing nothing', async () => {
    await seedPool(h, { id: 'pool-cu3', tenantId: 'acme', grants: ['globex'] });
    await call(h, 'PATCH', '/v1/pools/pool-cu3', { body: { policy: { maxUnavailable: 2 } } });
    const before = await poolOf('pool-cu3');
    const stale = await drydock(line('pools update', 'pool-cu3', { 'max-unavailable': 5, 'if-version': 1 }));
    expect(stale.code).toBe(3);
    expect(stale.stderr).toContain('pool changed since version 1 (now 2)');
    const staleGrant = await drydock(
      line('pools update', 'pool-cu3', { grant: 'umbrella', 'if-version': 1 }),
    );
    expect(staleGrant.code).toBe(3);
    expect((await drydock(line('pools update', 'pool-nope', { 'max-unavailable': 5 }))).code).toBe(4);
    const key = await tenantKey(h, 'acme', ['compute:nodes:read'], 'acme-reader');
    const tenant = await drydock(line('pools update', 'pool-cu3', { 'max-unavailable': 5 }), {
      token: key.secret,
    });
    expect(tenant.code).toBe(5);
    expect(await poolOf('pool-cu3')).toEqual(before);
  });

  it('refuses usage errors before any request', async () => {
    await cli.refuses([
      [line('pools update', 'pool-a'), 'give what to change: --max-unavailable, --max-unhealthy'],
      [line('pools update', 'pool-a', { 'max-unavailable': '2.5' }), '--max-unavailable must be a count'],
      [line('pools update', 'pool-a', { 'max-unhealthy': '140%' }), '--max-unhealthy must be a count'],
      [line('pools update', 'pool-a', { 'lost-after': 'later' }), '--lost-after must be a duration'],
      [line('pools update', 'pool-a', { remediation: '[1]' }), '--remediation must be a JSON object'],
      [line('pools update', 'pool-a', { reset: 'ladder' }), '--reset'],
      [line('pools update', 'pool-a', { grant: 'Globex' }), '--grant'],
      [
        line('pools update', 'pool-a', { 'lost-after': '10m', reset: 'lost-after' }),
        '--lost-after and --reset lost-after at once',
      ],
      [
        line('pools update', 'pool-a', { grant: 'globex', 'revoke-grant': 'globex' }),
        '--grant and --revoke-grant',
      ],
      [line('pools update', 'Pool_A', { 'max-unavailable': 2 }), 'POOL must be'],
    ]);
  });
});

describe('drydock nodes clear-condition', () => {
  it('clears a true condition with a reason; exits 3 when it is not true, changing nothing', async () => {
    const nodeId = await seedPoolNode(h, 'pool-cc1');
    await setNode(h, nodeId, {
      conditions: [{ type: 'GpuXidError', status: true, reason: 'xid-79', since: new Date().toISOString() }],
      noScheduleReasons: ['condition:GpuXidError'],
    });
    const { version } = await readNode(h, nodeId);
    const run = await drydock(
      line('nodes clear-condition', nodeId, 'GpuXidError', { reason: 'GPU swapped', 'if-version': version }),
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(
      `${(await readNode(h, nodeId)).hostname} (${nodeId}): GpuXidError cleared, version ${version + 1}\n`,
    );
    expect(await eventsOf(h, nodeId, 'node.condition.cleared')).toHaveLength(1);
    const again = await drydock(line('nodes clear-condition', nodeId, 'GpuXidError', { reason: 'again' }));
    expect(again.code).toBe(3);
    expect(again.stderr).toContain(`condition GpuXidError is not true on node ${nodeId}`);
    expect((await readNode(h, nodeId)).version).toBe(version + 1);
  });

  it('refuses usage errors before any request', async () => {
    const node = 'node_01k5w8v3x9q2m4n6p8r0s2t4v6';
    await cli.refuses(
      [
        [line('nodes clear-condition', node, 'GpuXidError'), 'missing --reason R'],
        [line('nodes clear-condition', node), 'missing TYPE'],
        [
          line('nodes clear-condition', node, 'gpu-xid', { reason: 'x' }),
          "TYPE must be a condition type such as GpuXidError: a letter, then letters and digits, got 'gpu-xid'",
        ],
      ],
      { exact: true },
    );
  });
});
