import { describe, expect, it } from 'vitest';
import { seedPoolNode, setNode } from '../support/builders';
import { call } from '../support/fixtures';
import { useHarness } from '../support/harness';

const h = useHarness({ worker: false });

// A control answers with the node as its transaction left it; this pins that the answer is the
// node as stored after it.
describe('the answer of a control', () => {
  it('is the node as a read right after it finds it', async () => {
    const nodeId = await seedPoolNode(h, 'pool-answer');
    await setNode(h, nodeId, { lastSeenAt: new Date('2026-01-02T03:04:05.678Z'), displayName: 'rack b7 #3' });
    await call(h, 'POST', `/v1/nodes/${nodeId}/label`, { body: { set: { rack: 'b7' } } });
    for (const [control, body] of [
      ['cordon', {}],
      ['taint', { add: ['gpu-fault'] }],
      ['label', { set: { rack: 'b8', zone: 'a' }, remove: [] }],
      ['taint', { remove: ['gpu-fault'] }],
      ['uncordon', { reason: 'done' }],
    ] as const) {
      const reply = await call(h, 'POST', `/v1/nodes/${nodeId}/${control}`, { body });
      expect(reply.status, control).toBe(200);
      const read = await call(h, 'GET', `/v1/nodes/${nodeId}`);
      expect(reply.body, control).toEqual(read.body);
    }
    expect((await call(h, 'GET', `/v1/nodes/${nodeId}`)).body).toMatchObject({
      version: 7,
      displayName: 'rack b7 #3',
      lastSeenAt: '2026-01-02T03:04:05.678Z',
      cordoned: false,
      noScheduleReasons: [],
    });
  });
});
