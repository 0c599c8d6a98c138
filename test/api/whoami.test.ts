import { describe, expect, it } from 'vitest';
import { ACTIONS } from '../../domain/principal';
import { join } from '../support/agents';
import { call, seedPool, tenantKey } from '../support/fixtures';
import { useHarness } from '../support/harness';

const h = useHarness({ worker: false });

describe('GET /v1/whoami', () => {
  it("answers the key's kind, name, tenant and actions", async () => {
    const operator = await call(h, 'GET', '/v1/whoami');
    expect(operator).toEqual({
      status: 200,
      body: {
        kind: 'operator',
        name: 'bootstrap-operator',
        tenantId: null,
        actions: [...ACTIONS],
        person: null,
      },
    });
    await seedPool(h, { id: 'pool-who', tenantId: 'who' });
    const key = await tenantKey(h, 'who', ['compute:nodes:read', 'compute:nodes:cordon'], 'who-ops');
    const tenant = await call(h, 'GET', '/v1/whoami', { token: key.secret });
    expect(tenant).toEqual({
      status: 200,
      body: {
        kind: 'tenant',
        name: 'who-ops',
        tenantId: 'who',
        actions: ['compute:nodes:read', 'compute:nodes:cordon'],
        person: null,
      },
    });
  });

  it('refuses a key without compute:nodes:read, a node credential and no credential', async () => {
    await seedPool(h, { id: 'pool-who2', tenantId: 'who2' });
    const key = await tenantKey(h, 'who2', ['compute:nodes:cordon']);
    const noRead = await call(h, 'GET', '/v1/whoami', { token: key.secret });
    expect(noRead.status).toBe(403);
    expect(noRead.body.error.details).toEqual({ action: 'compute:nodes:read' });
    const joined = await join(h, {});
    expect((await call(h, 'GET', '/v1/whoami', { token: joined.body.credential })).status).toBe(403);
    expect((await call(h, 'GET', '/v1/whoami', { token: null })).status).toBe(401);
  });
});
