import { describe, expect, it } from 'vitest';
import { nodeLabels } from '../../db/schema';
import { readNode, seedPoolNode } from '../support/builders';
import { call, eventsOf } from '../support/fixtures';
import { useHarness } from '../support/harness';

const h = useHarness({ worker: false });

describe('label: errors', () => {
  it('refuses grammar, limits, reserved keys, overlaps and keys owned by inventory or the system', async () => {
    const id = await seedPoolNode(h, 'pool-l');
    await h.db.insert(nodeLabels).values([
      { nodeId: id, key: 'gpu.model', value: 'H100', source: 'inventory' },
      { nodeId: id, key: 'agent.version', value: '1.2', source: 'system' },
    ]);
    const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));
    const bad: [string, unknown][] = [
      ['empty call', {}],
      ['empty set', { set: {} }],
      ['65 labels', { set: many(65) }],
      ['65 removes', { remove: Object.keys(many(65)) }],
      ['key with =', { set: { 'a=b': 'c' } }],
      ['key ends with /', { set: { 'rack/': 'b7' } }],
      ['129-char key', { set: { ['a'.repeat(129)]: 'v' } }],
      ['value with space', { set: { rack: 'b 7' } }],
      ['value with comma', { set: { rack: 'b7,b8' } }],
      ['257-char value', { set: { rack: 'v'.repeat(257) } }],
      ['number value', { set: { rack: 7 } }],
      ['reserved set', { set: { 'drydock.dev/role': 'x' } }],
      ['reserved remove', { remove: ['drydock.dev/role'] }],
      ['set and remove', { set: { rack: 'b7' }, remove: ['rack'] }],
      ['inventory key', { set: { 'gpu.model': 'A100' } }],
      ['system key', { set: { 'agent.version': '9' } }],
      ['unknown field', { labels: { rack: 'b7' } }],
    ];
    for (const [what, body] of bad) {
      const reply = await call(h, 'POST', `/v1/nodes/${id}/label`, { body });
      expect(reply.status, what).toBe(400);
      expect(reply.body.error.code, what).toBe('INVALID_INPUT');
    }
    const owned = await call(h, 'POST', `/v1/nodes/${id}/label`, {
      body: { set: { 'gpu.model': 'A100', rack: 'b7' } },
    });
    expect(owned.body.error.message).toContain('gpu.model (inventory)');
    const node = await readNode(h, id);
    expect(node.version).toBe(1);
    expect(node.labels.map((l: { key: string }) => l.key)).toEqual(['agent.version', 'gpu.model']);
    expect(await eventsOf(h, id)).toEqual([]);

    const limits = await call(h, 'POST', `/v1/nodes/${id}/label`, {
      body: { set: { ...many(63), ['k'.repeat(128)]: 'v'.repeat(256) } },
    });
    expect(limits.status).toBe(200);
    expect(limits.body.labels).toHaveLength(66);
  });

  it('refuses a stale If-Match with CONFLICT', async () => {
    const id = await seedPoolNode(h, 'pool-l');
    await call(h, 'POST', `/v1/nodes/${id}/cordon`);
    const stale = await call(h, 'POST', `/v1/nodes/${id}/label`, {
      body: { set: { rack: 'b7' } },
      headers: { 'if-match': '"1"' },
    });
    expect(stale.status).toBe(409);
    expect((await readNode(h, id)).labels).toEqual([]);
  });
});

describe('label: body rules come before any lookup', () => {
  it('answers INVALID_INPUT, not NOT_FOUND, for a bad body on a node that does not exist', async () => {
    const missing = 'node_01k5w8v3x9q2m4n6p8r0s2t4v6';
    for (const body of [{}, { set: { 'drydock.dev/x': 'y' } }, { set: { a: 'b' }, remove: ['a'] }]) {
      const reply = await call(h, 'POST', `/v1/nodes/${missing}/label`, { body });
      expect(reply.status, JSON.stringify(body)).toBe(400);
    }
    expect((await call(h, 'POST', `/v1/nodes/${missing}/label`, { body: { set: { a: 'b' } } })).status).toBe(
      404,
    );
  });
});
