import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeServer, listen } from '../../api/server';
import { bearer, readNode, seedPoolNode } from '../support/builders';
import { useHarness } from '../support/harness';

const h = useHarness({ worker: false });

let port: number;
let stop: () => Promise<void>;

beforeAll(async () => {
  const listening = await listen(h.deps, 0);
  port = listening.port;
  stop = () => closeServer(listening.server);
});
afterAll(() => stop?.());

/** One request with its path sent exactly as given (node:http does not normalize it). */
function send(method: string, path: string): Promise<{ status: number; body: any; requestId?: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: bearer(h.operatorKey) }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode!,
          body: text ? JSON.parse(text) : null,
          requestId: res.headers['x-request-id'] as string | undefined,
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe('paths are matched as sent', () => {
  it('refuses dot-segments, plain or encoded, and encoded slashes with 400 in the envelope', async () => {
    for (const path of [
      '/v1/agent/%2e%2e/keys',
      '/v1/agent/.%2E/keys',
      '/v1/agent/../keys',
      '/v1/./keys',
      '/v1/agent/%2E/heartbeat',
      '/v1/nodes/node_x%2Fevents',
      '/v1/nodes/node_x%5Cevents',
      '/v1/agent/%2e%2e/keys?limit=1',
    ]) {
      const answer = await send('GET', path);
      expect({ path, status: answer.status }).toEqual({ path, status: 400 });
      expect(answer.body.error).toMatchObject({ code: 'INVALID_INPUT', requestId: answer.requestId });
      expect(answer.body.error.message).toContain('dot-segment');
    }
  });

  it('refuses a query whose percent-encoding is not UTF-8, and reads a well-encoded one', async () => {
    for (const query of ['actor=%ED%A0%80alice%40example.com', 'actor=%FFalice', 'actor=50%', 'limit%FF=1']) {
      const answer = await send('GET', `/v1/audit?${query}`);
      expect({ query, status: answer.status }).toEqual({ query, status: 400 });
      expect(answer.body.error).toMatchObject({ code: 'INVALID_INPUT', requestId: answer.requestId });
      expect(answer.body.error.message).toMatch(/percent-encoding is not UTF-8/);
    }
    const fine = await send('GET', '/v1/audit?actor=alice%40example.com&type=node.');
    expect(fine.status).toBe(200);
    expect(fine.body.items).toEqual([]);
  });

  it('changes nothing through a path that would resolve to another route', async () => {
    const nodeId = await seedPoolNode(h, 'pool-path');
    const before = await readNode(h, nodeId);
    const answer = await send('POST', `/v1/agent/%2e%2e/nodes/${nodeId}/cordon`);
    expect(answer.status).toBe(400);
    expect(await readNode(h, nodeId)).toEqual(before);
  });

  it('answers the same route sent plainly, and a dot inside a segment is no dot-segment', async () => {
    expect((await send('GET', '/v1/keys')).status).toBe(200);
    const nodeId = await seedPoolNode(h, 'pool-path');
    expect((await send('GET', `/v1/nodes/${nodeId}`)).status).toBe(200);
    const dotted = await send('GET', '/v1/nodes/node..x');
    expect(dotted.body.error.message).not.toContain('dot-segment');
  });
});
