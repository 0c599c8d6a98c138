import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { closeServer, listen } from '../../api/server';
import { joinedNode } from '../support/agents';
import { heartbeat, joinedPoolNode, readNode } from '../support/builders';
import { call } from '../support/fixtures';
import { useHarness } from '../support/harness';

const h = useHarness({ worker: false });

// The bodies an agent sends skip the route's validation (api/routes/agent.ts); these pin that the
// answer does not depend on which way a body takes.
describe('heartbeat bodies', () => {
  it('an agent body and an equivalent other body get the same answer', async () => {
    const { nodeId, credential } = await joinedPoolNode(h, 'pool-hb');
    const beat = (body: string, contentType = 'application/json') =>
      call(h, 'POST', '/v1/agent/heartbeat', {
        token: credential,
        body,
        headers: { 'content-type': contentType },
      });
    const plain = await beat('{}');
    expect(plain.status).toBe(200);
    expect(plain.body).toMatchObject({ nodeId, ok: true });
    for (const [body, contentType] of [
      ['{ }', undefined],
      ['{"state": "running"}', undefined],
      ['{"state":"running"}', 'application/json; charset=utf-8'],
    ] as const) {
      const reply = await beat(body, contentType);
      expect(reply, body).toEqual(plain);
    }
  });

  it('a body refused by the schema is refused the same way whatever its spelling', async () => {
    const { credential } = await joinedPoolNode(h, 'pool-hb2');
    for (const body of ['{"state":"asleep"}', '{"state":"running","extra":1}', '{']) {
      const reply = await call(h, 'POST', '/v1/agent/heartbeat', { token: credential, body });
      expect(reply.status, body).toBe(400);
      expect(reply.body.error.code, body).toBe('INVALID_INPUT');
    }
  });

  it('the agent goodbye body ends the session as the validated one does', async () => {
    const first = await joinedPoolNode(h, 'pool-hb3');
    const second = await joinedNode(h, 'pool-hb3');
    for (const [{ nodeId, credential }, body] of [
      [first, '{"state":"offline"}'],
      [second, '{ "state": "offline" }'],
    ] as const) {
      expect((await heartbeat(h, credential)).status).toBe(200);
      expect(await readNode(h, nodeId)).toMatchObject({ connectivity: 'connected' });
      const reply = await call(h, 'POST', '/v1/agent/heartbeat', { token: credential, body });
      expect(reply.status, body).toBe(200);
      expect(await readNode(h, nodeId), body).toMatchObject({ connectivity: 'disconnected' });
    }
  });

  it('answers, over a socket, the bytes c.json writes, whichever way the body takes', async () => {
    const { nodeId, credential } = await joinedPoolNode(h, 'pool-hb4');
    const { server, port } = await listen(h.deps, 0);
    try {
      const { credential: lifetime } = JSON.parse(
        (await rawPost(port, '/v1/agent/heartbeat', credential, '{}')).text,
      ) as { credential: { expiresAt: string; renewAfter: string } };
      expect(Date.parse(lifetime.renewAfter)).toBeLessThan(Date.parse(lifetime.expiresAt));
      const expected = JSON.stringify({
        nodeId,
        ok: true,
        ca: { publicKey: h.deps.caPublicKeyPem, endorsements: h.deps.caEndorsements ?? [] },
        credential: lifetime,
      });
      for (const body of ['{}', '{"state":"running"}', '{ }']) {
        const reply = await rawPost(port, '/v1/agent/heartbeat', credential, body);
        expect(reply.status, body).toBe(200);
        expect(reply.text, body).toBe(expected);
        const { date: _date, 'x-request-id': _id, ...headers } = reply.headers;
        expect(headers, body).toEqual({
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(expected)),
          connection: 'keep-alive',
          'keep-alive': expect.any(String),
        });
      }
    } finally {
      await closeServer(server);
    }
  });
});

function rawPost(port: number, path: string, credential: string, body: string) {
  return new Promise<{ status: number; headers: Record<string, unknown>; text: string }>(
    (resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          method: 'POST',
          path,
          headers: { authorization: `Bearer ${credential}`, 'content-type': 'application/json' },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.once('end', () => resolve({ status: res.statusCode ?? 0, headers: { ...res.headers }, text }));
          res.once('error', reject);
        },
      );
      req.once('error', reject);
      req.end(body);
    },
  );
}
