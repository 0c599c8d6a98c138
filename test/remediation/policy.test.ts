import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { pools } from '../../db/schema';
import { joinedNode } from '../support/agents';
import { call, seedPool } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { agentOf } from '../support/remediation';

const h = useHarness({ worker: false });
const createPool = (id: string, remediation: unknown) =>
  call(h, 'POST', '/v1/pools', { body: { id, kind: 'provider', siteId: 'fra1', policy: { remediation } } });

describe('policy.remediation on a pool', () => {
  it('takes ladders, attempt timeouts and healthyAfter per condition type, as given', async () => {
    const remediation = {
      GpuXidError: { ladder: ['reset-accelerator', 'reboot', 'power-cycle'], attemptTimeout: '15m' },
      NicFlap: { ladder: ['reset_nic.v2'], healthyAfter: '0' },
      PsuFault: { attemptTimeout: '24h', healthyAfter: '1h' },
    };
    const created = await createPool('pool-policy-ok', remediation);
    expect(created.status).toBe(201);
    expect(created.body.policy).toEqual({ remediation });
    expect((await call(h, 'GET', '/v1/pools/pool-policy-ok')).body.policy).toEqual({ remediation });
  });

  it('refuses a malformed policy with 400 INVALID_INPUT naming the field, and records no pool', async () => {
    const bad: unknown[] = [
      [],
      'reboot',
      { 'gpu xid': {} },
      { '9Gpu': {} },
      { GpuXidError: { ladders: ['reboot'] } },
      { GpuXidError: { ladder: [] } },
      { GpuXidError: { ladder: Array.from({ length: 11 }, (_, i) => `step-${i}`) } },
      { GpuXidError: { ladder: ['Reset Accelerator'] } },
      { GpuXidError: { ladder: ['../../bin/sh'] } },
      { GpuXidError: { ladder: ['reboot', 7] } },
      { GpuXidError: { ladder: ['x'.repeat(65)] } },
      { GpuXidError: { attemptTimeout: '0' } },
      { GpuXidError: { attemptTimeout: '24.1h' } },
      { GpuXidError: { attemptTimeout: '10' } },
      { GpuXidError: { attemptTimeout: 600 } },
      { GpuXidError: { healthyAfter: '-1s' } },
      { GpuXidError: { healthyAfter: '61m' } },
      { GpuXidError: { healthyAfter: '1e3s' } },
      JSON.parse('{"__proto__": {"ladder": ["reboot"]}}'),
      Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`Cond${i}`, {}])),
    ];
    for (const [i, remediation] of bad.entries()) {
      const reply = await createPool(`pool-policy-bad-${i}`, remediation);
      expect(reply.status, JSON.stringify(remediation)).toBe(400);
      expect(reply.body.error.code).toBe('INVALID_INPUT');
      expect(JSON.stringify(reply.body.error.details)).toContain('remediation');
    }
    expect((await h.db.select().from(pools)).filter((p) => p.id.startsWith('pool-policy-bad-'))).toEqual([]);
  });

  it('a condition report answers the pool’s healthyAfter for its type, 60 s by default', async () => {
    await seedPool(h, {
      id: 'pool-healthy-after',
      tenantId: 'acme',
      kind: 'provider',
      policy: { remediation: { GpuXidError: { healthyAfter: '5m' }, NicFlap: { healthyAfter: '0' } } },
    });
    const { credential } = await joinedNode(h, 'pool-healthy-after');
    const agent = agentOf(h, credential);
    // Reports of `false` start nothing: this test needs no worker.
    expect((await agent.report('GpuXidError', false)).body.healthyAfterSeconds).toBe(300);
    expect((await agent.report('NicFlap', false)).body.healthyAfterSeconds).toBe(0);
    expect((await agent.report('PsuFault', false)).body.healthyAfterSeconds).toBe(60);
    const [row] = await h.db.select().from(pools).where(eq(pools.id, 'pool-healthy-after'));
    expect(row?.policy.remediation?.GpuXidError).toEqual({ healthyAfter: '5m' });
  });
});
