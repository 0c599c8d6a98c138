import { describe, expect, it } from 'vitest';
import { heartbeat, joinedPoolNode, pollCommands, readNode } from '../support/builders';
import { call, seedNode, tenantKey } from '../support/fixtures';
import { useHarness } from '../support/harness';

const h = useHarness({ worker: false });

describe('agent routes and node credentials', () => {
  it('node credentials are refused with 403 on every non-agent route', async () => {
    const { nodeId, credential } = await joinedPoolNode(h, 'pool-s');
    const other = await seedNode(h, { poolId: 'pool-s', tenantId: 'acme' });
    const routes: [string, string, unknown?][] = [
      ['GET', '/v1/nodes'],
      ['GET', `/v1/nodes/${nodeId}`],
      ['GET', `/v1/nodes/${nodeId}/events`],
      ['POST', `/v1/nodes/${nodeId}/cordon`, {}],
      ['POST', `/v1/nodes/${other}/uncordon`, {}],
      ['POST', `/v1/nodes/${nodeId}/drain`, {}],
      ['POST', `/v1/nodes/${nodeId}/taint`, { add: ['x'] }],
      ['POST', `/v1/nodes/${nodeId}/label`, { set: { a: 'b' } }],
      ['POST', `/v1/nodes/${nodeId}/unblock`, {}],
      ['POST', `/v1/nodes/${nodeId}/approve`, {}],
      ['POST', `/v1/nodes/${nodeId}/revoke-identity`, {}],
      ['DELETE', `/v1/nodes/${nodeId}`, {}],
      ['GET', '/v1/operations'],
      ['POST', '/v1/allocations', { nodeId, tenantId: 'acme', kind: 'job' }],
      ['GET', '/v1/pools'],
      ['GET', '/v1/pools/pool-s/capacity'],
      ['POST', '/v1/tokens', { poolId: 'pool-s', ttl: '1h', maxUses: 1 }],
      ['GET', '/v1/tokens'],
      ['GET', '/v1/keys'],
    ];
    for (const [method, path, body] of routes) {
      const reply = await call(h, method, path, { token: credential, body });
      expect(reply.status, `${method} ${path}`).toBe(403);
      expect(reply.body.error.code).toBe('FORBIDDEN');
    }
    expect(await readNode(h, nodeId)).toMatchObject({
      cordoned: false,
      access: 'allowed',
    });
  });

  it('operator and tenant keys are refused with 403 on agent routes; no credential is 401', async () => {
    const key = await tenantKey(h, 'acme', ['compute:nodes:read', 'compute:nodes:update'], 'acme-agentish');
    for (const token of [h.operatorKey, key.secret]) {
      expect((await heartbeat(h, token)).status).toBe(403);
      expect((await pollCommands(h, token)).status).toBe(403);
    }
    expect((await heartbeat(h, null)).status).toBe(401);
    expect((await heartbeat(h, 'ddn_forged')).status).toBe(401);
  });
});
