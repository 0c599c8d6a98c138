import { describe, expect, it } from 'vitest';
import { nodes } from '../../db/schema';
import { eq } from 'drizzle-orm';
import { execute, preview, retiredNode } from '../support/decommission';
import { call, seedPool, tenantKey } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { joinedNode } from '../support/agents';

const h = useHarness({ worker: false });

describe('decommission: security', () => {
  it('tenant keys and node credentials get 403; no credential 401; nothing changes', async () => {
    await seedPool(h, { id: 'pool-s', tenantId: 'acme' });
    const { nodeId, hostname } = await retiredNode(h, 'pool-s');
    const agent = await joinedNode(h, 'pool-s');
    const tenant = await tenantKey(
      h,
      'acme',
      ['compute:nodes:read', 'compute:nodes:delete', 'compute:nodes:update', 'compute:nodes:provision'],
      'acme-everything',
    );
    const p = (await preview(h, nodeId)).body;
    const body = {
      confirm: hostname,
      nodeGeneration: p.nodeGeneration,
      dependencyDigest: p.dependencyDigest,
      operator: 'mallory',
      reason: 'x',
    };
    for (const token of [tenant.secret, agent.credential]) {
      const pv = await preview(h, nodeId, token);
      expect(pv.status).toBe(403);
      expect(pv.body.error.code).toBe('FORBIDDEN');
      const ex = await execute(h, nodeId, body, 'sec-key-00001', token);
      expect(ex.status).toBe(403);
    }
    expect((await call(h, 'POST', `/v1/nodes/${nodeId}/decommission/preview`, { token: null })).status).toBe(
      401,
    );
    const [node] = await h.db.select().from(nodes).where(eq(nodes.id, nodeId));
    expect(node?.provisionState).toBe('adopted');
  });
});
