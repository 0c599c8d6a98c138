import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Connections } from '../agent/connections';
import { ApiError, createApiClient, Unreachable, type Fetch } from '@drydock/client';

const NODE = 'node_01k5w8v3x9q2m4n6p8r0s2t4v6';

/** What the server saw of the last request. */
let seen: { method?: string; url?: string; headers: IncomingMessage['headers']; body: string };
/** How the server answers the next request. */
let answer: (res: ServerResponse) => void;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    seen = { method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString() };
    answer(res);
  });
});
let baseUrl = '';
const connections = new Connections();

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  connections.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const json = (status: number, body: unknown) => (res: ServerResponse) =>
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

// The CLI sends with `fetch`, the agent over its own keep-alive pools: both must fail the same way.
describe.each<[string, () => Fetch | undefined]>([
  ['fetch', () => undefined],
  ['the agent connections', () => connections.fetch('call')],
])('the API client over %s', (_name, fetchOf) => {
  const client = (options: { token?: string; timeoutMs?: number } = {}) =>
    createApiClient({ baseUrl, timeoutMs: 5_000, fetch: fetchOf(), ...options });

  it('sends the credential, the headers a caller passes and the JSON body; answers the JSON', async () => {
    answer = json(202, { node: { id: NODE }, operation: { id: 'op_1', status: 'pending' } });
    const started = await client({ token: 'sekret' }).POST('/v1/nodes/{id}/drain', {
      params: { path: { id: NODE }, header: { 'idempotency-key': 'key-12345', 'if-match': '7' } },
      body: { reason: 'swap PSU' },
    });
    expect(started.operation).toEqual({ id: 'op_1', status: 'pending' });
    expect(seen).toMatchObject({
      method: 'POST',
      url: `/v1/nodes/${NODE}/drain`,
      body: '{"reason":"swap PSU"}',
    });
    expect(seen.headers).toMatchObject({
      authorization: 'Bearer sekret',
      accept: 'application/json',
      'content-type': 'application/json',
      'idempotency-key': 'key-12345',
      'if-match': '7',
    });
  });

  it('leaves out query parameters that are undefined, and sends no credential without one', async () => {
    answer = json(200, { items: [], nextCursor: null });
    await client().GET('/v1/nodes', {
      params: { query: { poolId: 'pool-a', cordoned: 'true', cursor: undefined } },
    });
    expect(seen.url).toBe('/v1/nodes?poolId=pool-a&cordoned=true');
    expect(seen.headers.authorization).toBeUndefined();
  });

  it('throws the error envelope as an ApiError', async () => {
    const error = { code: 'CONFLICT', message: 'node changed', details: { version: 8 }, requestId: 'req_1' };
    answer = json(409, { error });
    const thrown = await client()
      .GET('/v1/nodes/{id}', { params: { path: { id: NODE } } })
      .catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(ApiError);
    expect(thrown).toMatchObject({ status: 409, ...error });
  });

  it('throws BAD_RESPONSE for an answer that is not Drydock JSON, error or not', async () => {
    for (const [status, body] of [
      [502, '<html>bad gateway</html>'],
      [200, ''],
    ] as const) {
      answer = (res) => res.writeHead(status).end(body);
      const thrown = await client()
        .GET('/v1/nodes/{id}', { params: { path: { id: NODE } } })
        .catch((e: unknown) => e);
      expect(thrown).toBeInstanceOf(ApiError);
      expect(thrown).toMatchObject({
        status,
        code: 'BAD_RESPONSE',
        message: `GET /v1/nodes/${NODE} answered ${status} without Drydock JSON`,
      });
    }
  });

  it('throws Unreachable when nothing listens, when no answer comes in time, or when cancelled', async () => {
    // Port 2: below the ephemeral range (no server on port 0 gets it), not one fetch blocks, and
    // nothing here listens there. A port found free a moment ago may be taken by another test's
    // server before the connect, which then meets a reset, not a refusal.
    const dead = 'http://127.0.0.1:2';
    const refused = await createApiClient({ baseUrl: dead, timeoutMs: 5_000, fetch: fetchOf() })
      .GET('/v1/keys')
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Unreachable);
    expect(refused).toMatchObject({ detail: 'ECONNREFUSED', message: `cannot reach ${dead} (ECONNREFUSED)` });

    answer = () => {}; // never answers
    const late = await client({ timeoutMs: 200 })
      .GET('/v1/keys')
      .catch((e: unknown) => e);
    expect(late).toBeInstanceOf(Unreachable);
    expect((late as Unreachable).detail).toBe('no answer within 0.2s');

    // Cancelled while it waits for the answer: once the server has the request.
    const controller = new AbortController();
    answer = () => controller.abort();
    const cancelled = client().GET('/v1/keys', { signal: controller.signal });
    await expect(cancelled).rejects.toBeInstanceOf(Unreachable);
  });
});
