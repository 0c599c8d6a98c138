import { describe, expect, it } from 'vitest';
import { readNode, seedPoolNode } from '../support/builders';
import { call, eventsOf } from '../support/fixtures';
import { useHarness } from '../support/harness';

const h = useHarness({ worker: false });

describe('taint: errors', () => {
  it('refuses bad keys, limits, overlaps and empty calls before anything changes', async () => {
    const id = await seedPoolNode(h, 'pool-t');
    const keys = (n: number) => Array.from({ length: n }, (_, i) => `k${i}`);
    const bad: [string, unknown][] = [
      ['empty call', {}],
      ['empty lists', { add: [], remove: [] }],
      ['key in both', { add: ['rma'], remove: ['rma'] }],
      ['33 adds', { add: keys(33) }],
      ['33 removes', { remove: keys(33) }],
      ['empty key', { add: [''] }],
      ['starts with a dot', { add: ['.rma'] }],
      ['ends with a dash', { add: ['rma-'] }],
      ['space', { add: ['rma pending'] }],
      ['comma', { add: ['a,b'] }],
      ['129 characters', { add: ['a'.repeat(129)] }],
      ['not an array', { add: 'rma' }],
      ['number key', { add: [7] }],
      ['unknown field', { add: ['rma'], colour: 'red' }],
      ['long reason', { add: ['rma'], reason: 'r'.repeat(257) }],
    ];
    for (const [what, body] of bad) {
      const reply = await call(h, 'POST', `/v1/nodes/${id}/taint`, { body });
      expect(reply.status, what).toBe(400);
      expect(reply.body.error.code, what).toBe('INVALID_INPUT');
    }
    const ok = await call(h, 'POST', `/v1/nodes/${id}/taint`, {
      body: { add: keys(32), remove: ['x'.repeat(128)] },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.noScheduleReasons).toHaveLength(32);
    expect(await eventsOf(h, id)).toHaveLength(1);
  });

  it('refuses a stale version with CONFLICT', async () => {
    const id = await seedPoolNode(h, 'pool-t');
    await call(h, 'POST', `/v1/nodes/${id}/taint`, { body: { add: ['a'] } });
    const stale = await call(h, 'POST', `/v1/nodes/${id}/taint`, { body: { add: ['b'], version: 1 } });
    expect(stale.status).toBe(409);
    expect(stale.body.error).toMatchObject({ code: 'CONFLICT', details: { currentVersion: 2 } });
    expect((await readNode(h, id)).noScheduleReasons).toEqual(['taint:a']);
  });
});

describe('taint: body rules come before any lookup', () => {
  it('answers INVALID_INPUT, not NOT_FOUND, for a bad body on a node that does not exist', async () => {
    const missing = 'node_01k5w8v3x9q2m4n6p8r0s2t4v6';
    for (const body of [{}, { add: ['a'], remove: ['a'] }]) {
      expect(
        (await call(h, 'POST', `/v1/nodes/${missing}/taint`, { body })).status,
        JSON.stringify(body),
      ).toBe(400);
    }
    expect((await call(h, 'POST', `/v1/nodes/${missing}/taint`, { body: { add: ['a'] } })).status).toBe(404);
  });
});
