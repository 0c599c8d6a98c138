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
      version: 3,
      createdAt: '2026-12-01T00:00:00.000Z',
      updatedAt: '2026-12-02T00:00:00.000Z',
    };
    const shown = poolDetails(pool);
    expect(shown).toContain(
      'maxUnhealthy=40%, remediation={"GpuXidError":{"ladder":["reboot"],"attemptTimeout":"5m"}}',
    );
    // The version a `pools update --if-version` names.
    expect(shown).toMatch(/^Version: +3$/m);
  });
});
