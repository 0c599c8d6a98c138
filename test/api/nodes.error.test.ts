import { describe, expect, it } from 'vitest';
import { newId } from '../../domain/ids';
import { readNode, seedPoolNode } from '../support/builders';
import { call, eventsOf } from '../support/fixtures';
import { useHarness } from '../support/harness';

const h = useHarness({ worker: false });

describe('nodes: errors', () => {
  it('refuses malformed ids before any lookup', async () => {
    for (const path of [
      '/v1/nodes/node_123',
      '/v1/nodes/NODE_01K5W8V3X9Q2M4N6P8R0S2T4V6',
      '/v1/nodes/abc/events',
    ]) {
      const reply = await call(h, 'GET', path);
      expect(reply.status).toBe(400);
      expect(reply.body.error.code).toBe('INVALID_INPUT');
    }
  });

  it('answers NOT_FOUND for a well-formed id that does not exist', async () => {
    const id = newId('node');
    for (const [method, path] of [
      ['GET', `/v1/nodes/${id}`],
      ['GET', `/v1/nodes/${id}/events`],
      ['POST', `/v1/nodes/${id}/cordon`],
      ['POST', `/v1/nodes/${id}/uncordon`],
      ['POST', `/v1/nodes/${id}/drain`],
    ] as const) {
      const reply = await call(h, method, path);
      expect(reply.status, path).toBe(404);
      expect(reply.body.error).toMatchObject({
        code: 'NOT_FOUND',
        requestId: expect.stringMatching(/^req_/),
      });
    }
  });

  it('refuses a stale version with CONFLICT and the current version, changing nothing', async () => {
    const id = await seedPoolNode(h, 'pool-v');
    await call(h, 'POST', `/v1/nodes/${id}/cordon`);
    await call(h, 'POST', `/v1/nodes/${id}/uncordon`);
    const viaBody = await call(h, 'POST', `/v1/nodes/${id}/cordon`, { body: { version: 1 } });
    expect(viaBody.status).toBe(409);
    expect(viaBody.body.error).toMatchObject({
      code: 'CONFLICT',
      message: 'node changed since version 1 (now 3)',
      details: { currentVersion: 3 },
    });
    const viaHeader = await call(h, 'POST', `/v1/nodes/${id}/cordon`, { headers: { 'if-match': '2' } });
    expect(viaHeader.status).toBe(409);
    const disagree = await call(h, 'POST', `/v1/nodes/${id}/cordon`, {
      body: { version: 3 },
      headers: { 'if-match': '"2"' },
    });
    expect(disagree.status).toBe(400);
    const node = await readNode(h, id);
    expect(node).toMatchObject({ cordoned: false, version: 3 });
    expect(await eventsOf(h, id)).toHaveLength(2);
  });

  it('validates bodies, queries and headers', async () => {
    const id = await seedPoolNode(h, 'pool-b');
    const cases: [string, string, { body?: unknown; headers?: Record<string, string> }][] = [
      ['POST', `/v1/nodes/${id}/cordon`, { body: { reason: 'x'.repeat(257) } }],
      ['POST', `/v1/nodes/${id}/cordon`, { body: { reason: '' } }],
      ['POST', `/v1/nodes/${id}/cordon`, { body: { version: 0 } }],
      ['POST', `/v1/nodes/${id}/cordon`, { body: { version: '2' } }],
      ['POST', `/v1/nodes/${id}/cordon`, { body: { unknown: true } }],
      ['POST', `/v1/nodes/${id}/cordon`, { body: '[1,2' }],
      ['POST', `/v1/nodes/${id}/cordon`, { body: 'reason=x', headers: { 'content-type': 'text/plain' } }],
      ['POST', `/v1/nodes/${id}/cordon`, { headers: { 'if-match': 'W/"abc"' } }],
      ['POST', `/v1/nodes/${id}/drain`, { body: { deadline: 'soon' } }],
      ['POST', `/v1/nodes/${id}/drain`, { headers: { 'idempotency-key': 'short' } }],
      ['GET', '/v1/nodes?limit=201', {}],
      ['GET', '/v1/nodes?limit=0', {}],
      ['GET', '/v1/nodes?cordoned=yes', {}],
      ['GET', '/v1/nodes?provisionState=happy', {}],
      ['GET', '/v1/nodes?poolId=Pool_1', {}],
      ['GET', '/v1/nodes?cursor=bm90LWEtbm9kZQ', {}],
      ['GET', `/v1/nodes/${id}/events?limit=201`, {}],
      ['GET', `/v1/nodes/${id}/events?type=NODE.`, {}],
    ];
    for (const [method, path, options] of cases) {
      const reply = await call(h, method, path, options);
      expect(reply.status, `${method} ${path} ${JSON.stringify(options)}`).toBe(400);
      expect(reply.body.error.code).toBe('INVALID_INPUT');
      expect(reply.body.error.message).toEqual(expect.any(String));
    }
    expect(await readNode(h, id)).toMatchObject({ version: 1, cordoned: false });
    expect(await eventsOf(h, id)).toEqual([]);
  });

  it('answers unknown routes with the error envelope', async () => {
    const reply = await call(h, 'GET', '/v1/nope');
    expect(reply.status).toBe(404);
    expect(reply.body.error.code).toBe('NOT_FOUND');
  });
});
