import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LINGER_MS } from '../../api/body-limit';
import { closeServer, listen } from '../../api/server';
import { joinedNode, newPublicKey } from '../support/agents';
import { bearer, readNode } from '../support/builders';
import { seedPool } from '../support/fixtures';
import { eventually, useHarness } from '../support/harness';
import { runNode } from '../support/run-process';

const h = useHarness({ worker: false });

/** Short enough for a test to wait them out; production defaults are 10 s and 30 s. */
const HEADERS_TIMEOUT_MS = 600;
const REQUEST_TIMEOUT_MS = 900;

let port: number;
let stop: () => Promise<void>;
/** The server side of each connection by its client's port, to read how much the server took in. */
const serverSockets = new Map<number, Socket>();
/** Every connection the server accepted, in order. */
const accepted: Socket[] = [];

beforeAll(async () => {
  const listening = await listen(h.deps, 0, {
    headersTimeoutMs: HEADERS_TIMEOUT_MS,
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: 1_000,
  });
  port = listening.port;
  listening.server.on('connection', (socket: Socket) => {
    serverSockets.set(socket.remotePort!, socket);
    accepted.push(socket);
  });
  stop = () => closeServer(listening.server);
});
afterAll(() => stop?.());

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: any;
  /** From the first byte sent to the answer's arrival. */
  ms: number;
  /** From the first byte sent to the connection's close. */
  closedMs: number;
  /** The server's count of bytes it read on this connection, once it is closed. */
  serverBytesRead: number;
}

/**
 * Speaks HTTP/1.1 on a raw socket: `send` writes the request (and may keep writing, for as long
 * as the socket takes it); resolves once the server has answered and closed the connection.
 */
function raw(send: (socket: Socket) => Promise<void> | void): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let started = 0;
    let localPort = 0;
    let answeredAt = 0;
    socket.on('data', (chunk) => {
      answeredAt ||= Date.now();
      chunks.push(chunk);
    });
    // The server closes while we may still be writing: a reset then is expected, not a failure.
    socket.on('error', () => {});
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = text.split('\r\n\r\n', 2) as [string, string];
      const [statusLine = '', ...lines] = head.split('\r\n');
      const status = Number(statusLine.split(' ')[1]);
      if (!status) return reject(new Error(`no HTTP answer before the close: ${JSON.stringify(text)}`));
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        return reject(
          new Error(`the answer is not one JSON envelope: ${JSON.stringify(text.slice(0, 300))}`),
        );
      }
      resolve({
        status,
        headers,
        body: parsed,
        ms: answeredAt - started,
        closedMs: Date.now() - started,
        serverBytesRead: serverSockets.get(localPort)?.bytesRead ?? -1,
      });
    });
    socket.on('connect', () => {
      started = Date.now();
      localPort = socket.localPort!;
      void Promise.resolve(send(socket)).catch(() => {});
    });
  });
}

/** Writes `data` and waits until the socket takes more; false once the socket is gone. */
function write(socket: Socket, data: string | Buffer): Promise<boolean> {
  if (socket.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    if (socket.write(data)) return resolve(!socket.destroyed);
    const done = (ok: boolean) => () => {
      socket.off('drain', onDrain).off('close', onClose);
      resolve(ok);
    };
    const onDrain = done(true);
    const onClose = done(false);
    socket.once('drain', onDrain).once('close', onClose);
  });
}

function expectEnvelope(answer: RawAnswer, status: number, message: RegExp, code = 'INVALID_INPUT') {
  expect(answer.status).toBe(status);
  expect(answer.body).toEqual({
    error: {
      code,
      message: expect.stringMatching(message),
      details: expect.any(Object),
      requestId: expect.stringMatching(/^req_/),
    },
  });
  expect(answer.headers['x-request-id']).toBe(answer.body.error.requestId);
}

const MiB = 1024 * 1024;

describe('request bodies over 64 KiB', () => {
  it('a 16 MB chunked body is refused with 413 as soon as it passes the limit; the rest is not read, the connection closes', async () => {
    await seedPool(h, { id: 'pool-t' });
    const { nodeId } = await joinedNode(h, 'pool-t');
    const chunk = Buffer.alloc(MiB, 'a');
    let sent = 0;
    const answer = await raw(async (socket) => {
      const head = [
        `POST /v1/nodes/${nodeId}/cordon HTTP/1.1`,
        'Host: drydock',
        `Authorization: Bearer ${h.operatorKey}`,
        'Content-Type: application/json',
        'Transfer-Encoding: chunked',
        '',
        '',
      ].join('\r\n');
      if (!(await write(socket, head))) return;
      while (sent < 16 * MiB) {
        if (!(await write(socket, `${chunk.length.toString(16)}\r\n`))) return;
        if (!(await write(socket, Buffer.concat([chunk, Buffer.from('\r\n')])))) return;
        sent += chunk.length;
      }
      await write(socket, '0\r\n\r\n');
    });
    expectEnvelope(answer, 413, /request body over 65536 bytes/, 'PAYLOAD_TOO_LARGE');
    expect(answer.headers.connection).toBe('close');
    // Cut near the limit: the server took in a fraction of the 16 MB (socket buffers aside).
    expect(answer.serverBytesRead).toBeGreaterThan(64 * 1024);
    expect(answer.serverBytesRead).toBeLessThan(2 * MiB);
    expect(answer.ms).toBeLessThan(3_000);
    // The server closed the connection a moment after the answer, not at once (the linger, or the
    // request timeout where that comes first), and did not keep it.
    const moment = Math.min(LINGER_MS, REQUEST_TIMEOUT_MS - answer.ms);
    expect(answer.closedMs - answer.ms).toBeGreaterThanOrEqual(moment - 100);
    expect(answer.closedMs - answer.ms).toBeLessThan(LINGER_MS + 2_000);
    // Nothing changed.
    expect((await readNode(h, nodeId)).cordoned).toBe(false);
  });

  it('a declared Content-Length over the limit is refused with 413 at once, before any of the body is read', async () => {
    const answer = await raw((socket) => {
      socket.write(
        [
          'POST /v1/agent/join HTTP/1.1',
          'Host: drydock',
          'Content-Type: application/json',
          `Content-Length: ${16 * MiB}`,
          '',
          '{"hostname":',
        ].join('\r\n'),
      );
    });
    expectEnvelope(answer, 413, /request body over 65536 bytes/, 'PAYLOAD_TOO_LARGE');
    expect(answer.headers.connection).toBe('close');
    expect(answer.serverBytesRead).toBeLessThan(1024);
    // Answered long before the request timeout could have cut it.
    expect(answer.ms).toBeLessThan(REQUEST_TIMEOUT_MS);
  });

  it('with Expect: 100-continue, a body declared over the limit is not invited: the refusal comes first', async () => {
    const answer = await raw((socket) => {
      socket.write(
        [
          'POST /v1/agent/join HTTP/1.1',
          'Host: drydock',
          'Content-Type: application/json',
          'Expect: 100-continue',
          `Content-Length: ${16 * MiB}`,
          '',
          '',
        ].join('\r\n'),
      );
    });
    expectEnvelope(answer, 413, /request body over 65536 bytes/, 'PAYLOAD_TOO_LARGE');
  });

  it('a chunked body under the limit is read and served, and the connection stays open for the next request', async () => {
    const body = JSON.stringify({ hostname: 'chunked-1', publicKey: newPublicKey() });
    const answer = await raw((socket) => {
      const head =
        'POST /v1/agent/join HTTP/1.1\r\nHost: drydock\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n';
      const half = Math.floor(body.length / 2);
      const chunks = [body.slice(0, half), body.slice(half)].map(
        (part) => `${Buffer.byteLength(part).toString(16)}\r\n${part}\r\n`,
      );
      socket.write(`${head}${chunks.join('')}0\r\n\r\n`);
    });
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({ provisionState: 'pending' });
    expect(answer.headers.connection).toBe('keep-alive');
  });

  it('in process too (the same middleware): a chunked body over the limit is PAYLOAD_TOO_LARGE with a request id', async () => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 3; i++) controller.enqueue(new Uint8Array(32 * 1024).fill(32));
        controller.close();
      },
    });
    const response = await h.app.request('/v1/agent/join', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(413);
    const envelope = (await response.json()) as { error: { code: string; requestId: string } };
    expect(envelope.error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(response.headers.get('x-request-id')).toBe(envelope.error.requestId);
  });

  it('a client elsewhere that sends 16 MB with fetch reads the 413, chunked or with a length; the server reads little and closes each connection', async () => {
    await seedPool(h, { id: 'pool-fetch' });
    const { nodeId } = await joinedNode(h, 'pool-fetch');
    const before = await readNode(h, nodeId);
    const first = accepted.length;
    const rounds = [true, true, true, false, false];
    const outcomes = await uploadsFromAnotherProcess(
      `http://127.0.0.1:${port}/v1/nodes/${nodeId}/cordon`,
      rounds,
    );
    expect(outcomes).toHaveLength(rounds.length);
    for (const [i, outcome] of outcomes.entries()) {
      const what = `${rounds[i] ? 'chunked' : 'Content-Length'} upload ${i + 1}`;
      expect(outcome, what).toMatchObject({
        status: 413,
        connection: 'close',
        body: { error: { code: 'PAYLOAD_TOO_LARGE', message: 'request body over 65536 bytes' } },
      });
      expect(outcome.requestId, what).toBe(outcome.body?.error.requestId);
    }
    // No connection kept, none read to its end.
    const connections = accepted.slice(first);
    expect(connections.length).toBeGreaterThanOrEqual(rounds.length);
    await eventually(async () => connections.every((socket) => socket.destroyed), LINGER_MS + 3_000);
    for (const socket of connections) expect(socket.bytesRead).toBeLessThan(2 * MiB);
    expect(await readNode(h, nodeId)).toEqual(before);
  });
});

interface UploadOutcome {
  status?: number;
  connection?: string | null;
  requestId?: string | null;
  body?: { error: { code: string; message: string; requestId: string } };
  error?: string;
}

/**
 * POSTs 16 MB to `url` once per round (chunked, or with a Content-Length), with fetch in a
 * process of its own, as a client elsewhere would: what it read each time, or how it failed.
 */
async function uploadsFromAnotherProcess(url: string, rounds: boolean[]): Promise<UploadOutcome[]> {
  const script = `
    const { url, token, rounds } = JSON.parse(process.env.UPLOADS);
    const MiB = 1024 * 1024;
    for (const chunked of rounds) {
      let sent = 0;
      const body = chunked
        ? new ReadableStream({
            pull(controller) {
              if (sent >= 16 * MiB) return controller.close();
              sent += MiB;
              controller.enqueue(new Uint8Array(MiB).fill(32));
            },
          })
        : new Uint8Array(16 * MiB).fill(32);
      try {
        const response = await fetch(url, {
          method: 'POST',
          headers: { authorization: 'Bearer ' + token, 'content-type': 'application/json' },
          body,
          duplex: 'half',
        });
        console.log(JSON.stringify({
          status: response.status,
          connection: response.headers.get('connection'),
          requestId: response.headers.get('x-request-id'),
          body: await response.json(),
        }));
      } catch (error) {
        console.log(JSON.stringify({ error: String(error) + ' ' + String(error.cause) }));
      }
    }`;
  const exit = await runNode(['--input-type=module', '-e', script], {
    UPLOADS: JSON.stringify({ url, token: h.operatorKey, rounds }),
  });
  expect(exit.stderr).toBe('');
  return exit.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as UploadOutcome);
}

describe('server timeouts', () => {
  it('a body that declares 100 bytes and sends 10 is cut after the request timeout, in the envelope', async () => {
    const answer = await raw((socket) => {
      socket.write(
        [
          'POST /v1/agent/join HTTP/1.1',
          'Host: drydock',
          'Content-Type: application/json',
          'Content-Length: 100',
          '',
          '{"hostname',
        ].join('\r\n'),
      );
    });
    expectEnvelope(answer, 400, /took over 900 ms/);
    expect(answer.ms).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
    expect(answer.ms).toBeLessThan(REQUEST_TIMEOUT_MS + 1_500);
  });

  it('headers that never end are cut after the headers timeout', async () => {
    const answer = await raw((socket) => {
      socket.write('GET /healthz HTTP/1.1\r\nHost: drydock\r\nX-Slow: ');
    });
    expectEnvelope(answer, 400, /took over/);
    expect(answer.ms).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 50);
    expect(answer.ms).toBeLessThan(HEADERS_TIMEOUT_MS + 1_500);
  });

  it("an agent's long-poll outlasts both timeouts: its request has no body", async () => {
    await seedPool(h, { id: 'pool-lp' });
    const { credential } = await joinedNode(h, 'pool-lp');
    const started = Date.now();
    const response = await fetch(`http://127.0.0.1:${port}/v1/agent/commands?wait=2`, {
      headers: bearer(credential),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ items: [] });
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_000 - 50);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
  });
});

describe('oversized request lines and headers', () => {
  it('a 100 KB URL gets a 400 envelope, not a reset', async () => {
    const answer = await raw((socket) => {
      socket.write(`GET /v1/nodes?q=${'a'.repeat(100 * 1024)} HTTP/1.1\r\nHost: drydock\r\n\r\n`);
    });
    expectEnvelope(answer, 400, /URL/);
  });

  it('an 80 KB header block gets a 400 envelope', async () => {
    const answer = await raw((socket) => {
      const headers = Array.from({ length: 20 }, (_, i) => `X-Filler-${i}: ${'b'.repeat(4096)}\r\n`).join('');
      socket.write(`GET /healthz HTTP/1.1\r\nHost: drydock\r\n${headers}\r\n`);
    });
    expectEnvelope(answer, 400, /headers/);
  });

  it('with fetch as the client, a 100 KB URL is an answer too', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/v1/nodes?q=${'a'.repeat(100 * 1024)}`);
    expect(response.status).toBe(400);
    const envelope = (await response.json()) as { error: { code: string; requestId: string } };
    expect(envelope.error.code).toBe('INVALID_INPUT');
    expect(response.headers.get('x-request-id')).toBe(envelope.error.requestId);
  });
});

describe('the Host header', () => {
  it('missing, or not a host name, gets a 400 envelope with a request id, not a bare status line', async () => {
    const missing = await raw((socket) => {
      socket.write('GET /healthz HTTP/1.1\r\n\r\n');
    });
    expectEnvelope(missing, 400, /no Host header/);
    for (const host of ['exa mple', 'a@b', 'drydock/x', '[::1']) {
      const bad = await raw((socket) => {
        socket.write(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
      });
      expectEnvelope(bad, 400, /Host header/);
    }
    // A good one is served as before, by name or address and port.
    for (const host of ['drydock', `127.0.0.1:${port}`, '[::1]:8080']) {
      const answer = await raw((socket) => {
        socket.write(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      });
      expect(answer.status, host).toBe(200);
    }
  });
});

describe('X-Request-Id', () => {
  it('is on every answer: success, 400, 401, 403, 404 (route and id), over the wire', async () => {
    await seedPool(h, { id: 'pool-id' });
    const { credential } = await joinedNode(h, 'pool-id');
    const base = `http://127.0.0.1:${port}`;
    const operator = bearer(h.operatorKey);
    const cases: [number, string, RequestInit][] = [
      [200, '/healthz', {}],
      [200, '/v1/nodes', { headers: operator }],
      [400, '/v1/nodes?limit=abc', { headers: operator }],
      [400, '/v1/agent/join', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' }],
      [401, '/v1/nodes', {}],
      [401, '/v1/nodes', { headers: { authorization: 'Bearer nope' } }],
      [403, '/v1/nodes', { headers: bearer(credential) }],
      [404, '/no/such/route', {}],
      [404, '/v1/nodes/node_01k5w8v3x9q2m4n6p8r0s2t4v6', { headers: operator }],
    ];
    for (const [status, path, init] of cases) {
      const response = await fetch(`${base}${path}`, init);
      expect({ path, status: response.status }).toEqual({ path, status });
      const id = response.headers.get('x-request-id');
      expect(id).toMatch(/^req_/);
      if (status >= 400) {
        const envelope = (await response.json()) as { error: { requestId: string } };
        expect(envelope.error.requestId).toBe(id);
      } else {
        await response.arrayBuffer();
      }
    }
  });
});
