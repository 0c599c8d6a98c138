import { describe, expect, it } from 'vitest';
import { setNode } from '../support/builders';
import { call, eventsOf, seedNode, seedPool, tenantKey } from '../support/fixtures';
import { useHarness } from '../support/harness';
import { csrfOf, flashOf, useConsole, signedIn as signedInAs } from './console-client';

const h = useHarness({ worker: false });
const server = useConsole(h);

const nodeOf = async (id: string) => (await call(h, 'GET', `/v1/nodes/${id}`)).body;
const CLEAR_FORM = /action="\/console\/nodes\/node_[0-9a-z]{26}\/clear-condition"/g;

/** A node of acme's with a true GpuXidError, a false NicFlap and the liveness sweep's NodeUnreachable. */
async function faultyNode(poolId: string) {
  await seedPool(h, { id: poolId, tenantId: 'acme' });
  const nodeId = await seedNode(h, { poolId, tenantId: 'acme', hostname: `${poolId}-gpu` });
  const since = new Date().toISOString();
  await setNode(h, nodeId, {
    conditions: [
      { type: 'GpuXidError', status: true, reason: 'xid-79', since },
      { type: 'NicFlap', status: false, reason: null, since },
      { type: 'NodeUnreachable', status: true, reason: 'HeartbeatTimeout', since },
    ],
    noScheduleReasons: ['condition:GpuXidError', 'unreachable'],
  });
  return nodeId;
}

const signedIn = (key: string) => signedInAs(server.base, key);

describe('node page: clearing a condition by hand', () => {
  it('a Clear button on each true fault condition; it clears that one with the reason given', async () => {
    const nodeId = await faultyNode('pool-ccon1');
    const browser = await signedIn(h.operatorKey);
    const page = await browser.get(`/console/nodes/${nodeId}`);
    // One button: not for the false NicFlap, nor for NodeUnreachable (a heartbeat clears it).
    expect(page.html.match(CLEAR_FORM)).toHaveLength(1);
    expect(page.html).toContain('<input type="hidden" name="condition" value="GpuXidError"/>');
    // The conditions re-render live, so the form's version follows the node.
    expect(page.html).toContain('id="live-conditions" data-live=""');
    const node = await nodeOf(nodeId);

    const done = await browser.post(`/console/nodes/${nodeId}/clear-condition`, {
      csrf: csrfOf(page),
      version: String(node.version),
      condition: 'GpuXidError',
      reason: 'GPU reseated',
    });
    expect(done.status).toBe(303);
    expect(done.location).toBe(`/console/nodes/${nodeId}`);
    const after = await browser.get(done.location!);
    expect(flashOf(after)).toEqual(['ok', 'pool-ccon1-gpu: GpuXidError cleared.']);
    expect(after.html.match(CLEAR_FORM)).toBeNull();
    expect(await nodeOf(nodeId)).toMatchObject({
      version: node.version + 1,
      noScheduleReasons: ['unreachable'],
    });
    expect(await eventsOf(h, nodeId, 'node.condition.cleared')).toEqual([
      expect.objectContaining({ actor: 'key:bootstrap-operator', reason: 'GPU reseated' }),
    ]);
  });

  it("refusals are the API's in the flash (stale version, no reason, a condition not true); nothing changes", async () => {
    const nodeId = await faultyNode('pool-ccon2');
    const browser = await signedIn(h.operatorKey);
    const page = await browser.get(`/console/nodes/${nodeId}`);
    const node = await nodeOf(nodeId);
    const tries: [Record<string, string>, RegExp][] = [
      [{ version: String(node.version + 1), condition: 'GpuXidError', reason: 'x' }, /\(CONFLICT\)$/],
      [{ version: String(node.version), condition: 'GpuXidError', reason: '' }, /\(INVALID_INPUT\)$/],
      [
        { version: String(node.version), condition: 'NicFlap', reason: 'x' },
        /is not true on node .+\(INVALID_STATE\)$/,
      ],
      [{ version: String(node.version), condition: 'gpu xid', reason: 'x' }, /\(INVALID_INPUT\)$/],
    ];
    for (const [fields, said] of tries) {
      const done = await browser.post(`/console/nodes/${nodeId}/clear-condition`, {
        csrf: csrfOf(page),
        ...fields,
      });
      const shown = flashOf(await browser.get(done.location!));
      expect(shown?.[0], JSON.stringify(fields)).toBe('error');
      expect(shown?.[1], JSON.stringify(fields)).toMatch(said);
    }
    const forged = await browser.post(`/console/nodes/${nodeId}/clear-condition`, {
      condition: 'GpuXidError',
      reason: 'x',
    });
    expect(forged.status).toBe(403);
    expect(await nodeOf(nodeId)).toEqual(node);
    expect(await eventsOf(h, nodeId)).toEqual([]);
  });

  it('a tenant key gets the button only with compute:nodes:remediate', async () => {
    const nodeId = await faultyNode('pool-ccon3');
    const reader = await tenantKey(h, 'acme', ['compute:nodes:read', 'compute:nodes:update'], 'acme-updater');
    const page = await (await signedIn(reader.secret)).get(`/console/nodes/${nodeId}`);
    expect(page.status).toBe(200);
    expect(page.html.match(CLEAR_FORM)).toBeNull();
    const remediator = await tenantKey(
      h,
      'acme',
      ['compute:nodes:read', 'compute:nodes:remediate'],
      'acme-remediator',
    );
    const browser = await signedIn(remediator.secret);
    const shown = await browser.get(`/console/nodes/${nodeId}`);
    expect(shown.html.match(CLEAR_FORM)).toHaveLength(1);
    const done = await browser.post(`/console/nodes/${nodeId}/clear-condition`, {
      csrf: csrfOf(shown),
      condition: 'GpuXidError',
      reason: 'probe misread',
    });
    expect(flashOf(await browser.get(done.location!))?.[0]).toBe('ok');
    expect((await nodeOf(nodeId)).noScheduleReasons).toEqual(['unreachable']);
  });
});
