import { describe, expect, it } from 'vitest';
import {
  decommissionWorkflowId,
  drainWorkflowId,
  purgeWorkflowId,
  remediationWorkflowId,
} from '../workflows/definitions';
import { createToken, join } from './support/agents';
import { setNode } from './support/builders';
import { executeFromPreview, retiredNode } from './support/decommission';
import { allocate, call, seedNode, seedPool } from './support/fixtures';
import { eventually, useHarness } from './support/harness';

const h = useHarness();

const unique = (name: string) => `${name}-${Math.random().toString(36).slice(2, 7)}`;

/** The workflow ids Temporal's visibility finds for a query (eventually consistent: polled). */
async function found(query: string, want: number): Promise<string[]> {
  return eventually(async () => {
    const ids: string[] = [];
    for await (const wf of h.temporal.workflow.list({ query })) ids.push(wf.workflowId);
    return ids.length >= want ? ids.sort() : undefined;
  });
}

describe('every lifecycle workflow is found by the Hostname of its node', () => {
  it('drain, decommission, purge and remediation', async () => {
    await seedPool(h, { id: 'pool-hn', tenantId: 'acme', kind: 'provider', policy: { maxUnhealthy: 5 } });
    const token = await createToken(h, { poolId: 'pool-hn' });

    const drained = unique('gpu-hn-drain');
    const drainNode = await seedNode(h, { poolId: 'pool-hn', tenantId: 'acme', hostname: drained });
    await allocate(h, drainNode, 'acme');
    expect((await call(h, 'POST', `/v1/nodes/${drainNode}/drain`, { body: {} })).status).toBe(202);

    const retired = await retiredNode(h, 'pool-hn', unique('gpu-hn-decom'));
    expect((await executeFromPreview(h, retired.nodeId)).reply.status).toBe(202);

    const purged = unique('gpu-hn-purge');
    const purgeNode = (await join(h, { token: token.secret, hostname: purged })).body.nodeId as string;
    const purge = await call(h, 'POST', `/v1/nodes/${purgeNode}/purge`, { body: { confirm: true } });
    expect(purge.status).toBe(202);

    const remediated = unique('gpu-hn-rem');
    const remNode = (await join(h, { token: token.secret, hostname: remediated })).body.nodeId as string;
    await setNode(h, remNode, {
      noScheduleReasons: ['condition:GpuXidError'],
      conditions: [{ type: 'GpuXidError', status: true, reason: 'xid-79', since: new Date().toISOString() }],
    });
    const remediation = await call(h, 'POST', `/v1/nodes/${remNode}/remediations`, {
      body: { condition: 'GpuXidError' },
    });
    expect(remediation.status).toBe(202);

    expect(await found(`Hostname = "${drained}"`, 1)).toEqual([drainWorkflowId(drainNode)]);
    expect(await found(`Hostname = "${retired.hostname}"`, 1)).toEqual([
      decommissionWorkflowId(retired.nodeId),
    ]);
    expect(await found(`Hostname = "${purged}"`, 1)).toEqual([purgeWorkflowId(purgeNode)]);
    expect(await found(`Hostname = "${remediated}"`, 1)).toEqual([remediationWorkflowId(remNode)]);
    // Beside the kind, as an operator narrows it in the UI.
    expect(await found(`Hostname = "${purged}" AND LifecycleOperation = "purge"`, 1)).toEqual([
      purgeWorkflowId(purgeNode),
    ]);
    expect(await found(`Hostname = "${purged}" AND LifecycleOperation = "drain"`, 0)).toEqual([]);
  });
});
