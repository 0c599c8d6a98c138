import { describe, expect, it } from 'vitest';
import { bearer } from '../support/builders';
import { eventsOf, seedNode, seedPool } from '../support/fixtures';
import { useHarness } from '../support/harness';

const h = useHarness({ worker: false });

/** A cordon whose body is exactly these bytes, sent as given or chunked (no Content-Length). */
async function cordon(nodeId: string, bytes: Uint8Array, chunked = false) {
  const body = chunked
    ? new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytes);
          controller.close();
        },
      })
    : bytes;
  const response = await h.app.request(`/v1/nodes/${nodeId}/cordon`, {
    method: 'POST',
    headers: { ...bearer(h.operatorKey), 'content-type': 'application/json' },
    body,
    ...(chunked ? { duplex: 'half' } : {}),
  } as RequestInit);
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

const bytesOf = (...parts: (string | number[])[]) =>
  new Uint8Array(parts.flatMap((p) => (typeof p === 'string' ? [...Buffer.from(p)] : p)));

describe('request bodies must be valid UTF-8', () => {
  it('refuses invalid bytes and encoded surrogates instead of storing U+FFFD; nothing changes', async () => {
    await seedPool(h, { id: 'pool-utf8' });
    const nodeId = await seedNode(h, { poolId: 'pool-utf8' });
    const before = await eventsOf(h, nodeId);
    for (const [what, bytes] of [
      ['a stray continuation byte', bytesOf('{"reason":"psu', [0x80], '"}')],
      ['an invalid lead byte', bytesOf('{"reason":"psu', [0xff], '"}')],
      ['a lone surrogate encoded as UTF-8', bytesOf('{"reason":"psu', [0xed, 0xa0, 0x80], '"}')],
      ['a truncated sequence', bytesOf('{"reason":"psu', [0xe2, 0x82], '"}')],
      ['an overlong encoding', bytesOf('{"reason":"psu', [0xc0, 0xaf], '"}')],
    ] as const) {
      for (const chunked of [false, true]) {
        const reply = await cordon(nodeId, bytes, chunked);
        expect(reply.status, `${what}${chunked ? ', chunked' : ''}`).toBe(400);
        expect(reply.body.error).toMatchObject({
          code: 'INVALID_INPUT',
          message: 'the request body is not valid UTF-8',
          requestId: expect.stringMatching(/^req_/),
        });
      }
    }
    expect(await eventsOf(h, nodeId)).toEqual(before);
  });

  it('takes well-formed multi-byte text as sent', async () => {
    await seedPool(h, { id: 'pool-utf8-ok' });
    const nodeId = await seedNode(h, { poolId: 'pool-utf8-ok' });
    const reason = 'Netzteil tauschen – Gehäuse 🚀';
    const reply = await cordon(nodeId, bytesOf(JSON.stringify({ reason })), true);
    expect(reply.status).toBe(200);
    expect(reply.body.cordoned).toBe(true);
    expect(await eventsOf(h, nodeId, 'node.cordoned')).toEqual([expect.objectContaining({ reason })]);
  });
});
