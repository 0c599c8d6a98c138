import { describe, expect, it } from 'vitest';
import { poolDetails, type Pool } from './pools';

describe('pools show', () => {
  it('prints each policy field, policy.remediation as its JSON', () => {
    const pool: Pool = {
      id: 'pool-gpu',
      kind: 'bare-metal',
      siteId: 'fra1',
      tenantId: null,
      grants: [],
      policy: {
        maxUnhealthy: '40%',
        remediation: { GpuXidError: { ladder: ['reboot'], attemptTimeout: '5m' } },
      },
      createdAt: '2026-12-01T00:00:00.000Z',
    };
    expect(poolDetails(pool)).toContain(
      'maxUnhealthy=40%, remediation={"GpuXidError":{"ladder":["reboot"],"attemptTimeout":"5m"}}',
    );
  });
});
