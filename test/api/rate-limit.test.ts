import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimits, type RateLimitSettings } from '../../api/rate-limit';
import { closeServer, listen } from '../../api/server';
import { nodes, rateLimits } from '../../db/schema';
import { createToken, newPublicKey } from '../support/agents';
import { seedPool } from '../support/fixtures';
import { useHarness } from '../support/harness';

/** The limiters' clock: tests move it instead of sleeping. */
let clock = 1_000_000;
const small: RateLimitSettings = {
  // A token every 2 s; a token-less join every 10 s.
  authFailures: { perMinute: 30, burst: 20 },
  tokenlessJoins: { perMinute: 6, burst: 5 },
  // The test client connects from 127.0.0.1 and names the address it stands for in X-Forwarded-For.
  trustedProxies: ['127.0.0.1', '::1'],
  now: () => clock,
};
const h = useHarness({ worker: false, rateLimits: small });

let base: string;
/** The same API with no trusted proxy: X-Forwarded-For must not matter there. */
let untrustingBase: string;
const stops: (() => Promise<void>)[] = [];

beforeAll(async () => {
  for (const [deps, set] of [
    [h.deps, (url: string) => (base = url)],
    [
      { ...h.deps, rateLimits: new RateLimits(h.db, { ...small, trustedProxies: [] }) },
      (url: string) => (untrustingBase = url),
    ],
  ] as const) {
    const { server, port } = await listen(deps, 0);
    set(`http://127.0.0.1:${port}`);
    stops.push(() => closeServer(server));
  }
});
afterAll(async () => {
  for (const stop of stops) await stop();
});

async function send(
  path: string,
  options: { from?: string; token?: string; method?: string; body?: unknown; at?: string } = {},
) {
  const headers: Record<string, string> = {};
  if (options.from) headers['x-forwarded-for'] = options.from;
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body) headers['content-type'] = 'application/json';
  const response = await fetch(`${options.at ?? base}${path}`, {
    method: options.method ?? 'GET',
    headers,
    body: options.body ? JSON.stringify(options.body) : undefined,
  });
  const body = (await response.json()) as any;
  return {
    status: response.status,
    body,
    retryAfter: response.headers.get('retry-after'),
    id: response.headers.get('x-request-id'),
  };
}

const tokenlessJoin = (from: string, extra: Record<string, unknown> = {}) =>
  send('/v1/agent/join', {
    from,
    method: 'POST',
    body: { hostname: `h-${Math.random().toString(36).slice(2, 8)}`, publicKey: newPublicKey(), ...extra },
  });

describe('failed authentications per source address', () => {
  it('950 in a row: 401 up to the burst, then 429 with Retry-After; valid keys from there are still served', async () => {
    const attacker = '203.0.113.7';
    const replies = [];
    // In waves of 50 at once: the count per address holds under concurrency too.
    for (let wave = 0; wave < 950 / 50; wave++) {
      const calls = Array.from({ length: 50 }, (_, i) =>
        send('/v1/nodes', { from: attacker, token: `wrong-${wave}-${i}` }),
      );
      replies.push(...(await Promise.all(calls)));
    }
    expect(replies.filter((r) => r.status === 401)).toHaveLength(20);
    const limited = replies.filter((r) => r.status === 429);
    expect(limited).toHaveLength(930);
    for (const reply of limited) {
      expect(reply.retryAfter).toBe('2');
      expect(reply.body).toEqual({
        error: {
          code: 'RATE_LIMITED',
          message: expect.stringContaining('too many failed authentications'),
          details: { retryAfterSeconds: 2 },
          requestId: reply.id,
        },
      });
    }
    // A missing credential is a failed authentication too.
    expect((await send('/v1/nodes', { from: attacker })).status).toBe(429);

    // The operator behind the same address is not locked out, and another address is untouched.
    expect((await send('/v1/nodes', { from: attacker, token: h.operatorKey })).status).toBe(200);
    expect((await send('/v1/nodes', { from: '203.0.113.8', token: 'wrong' })).status).toBe(401);

    // After Retry-After one more failure is answered 401 again, and only one.
    clock += 2_000;
    expect((await send('/v1/nodes', { from: attacker, token: 'wrong' })).status).toBe(401);
    expect((await send('/v1/nodes', { from: attacker, token: 'wrong' })).status).toBe(429);
  });

  it('without a trusted proxy X-Forwarded-For is ignored: claimed addresses share the peer’s limit', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++) {
      const reply = await send('/v1/nodes', { at: untrustingBase, from: `198.51.100.${i}`, token: 'wrong' });
      statuses.push(reply.status);
    }
    expect(statuses).toEqual([...Array(20).fill(401), 429]);
    // Both APIs count in the same rows, as every API process does: the peer's allowance spent
    // here is back once 20 intervals of 2 s have passed.
    clock += 40_000;
  });

  it('behind a trusted proxy, the nearest untrusted hop counts: a forged first hop gains nothing; IPv6 counts by /64', async () => {
    const forged = [];
    for (let i = 0; i < 21; i++) {
      forged.push((await send('/v1/nodes', { from: `10.9.9.${i}, 203.0.113.30`, token: 'wrong' })).status);
    }
    expect(forged).toEqual([...Array(20).fill(401), 429]);
    const v6 = [];
    for (let i = 0; i < 21; i++) {
      v6.push(
        (await send('/v1/nodes', { from: `2001:db8:1:2::${(i + 1).toString(16)}`, token: 'wrong' })).status,
      );
    }
    expect(v6).toEqual([...Array(20).fill(401), 429]);
    expect((await send('/v1/nodes', { from: '2001:db8:1:3::1', token: 'wrong' })).status).toBe(401);
    // A trusted proxy that names no client counts as the client itself (here the test's own peer).
    const unnamed = [];
    for (let i = 0; i < 21; i++)
      unnamed.push((await send('/v1/nodes', { from: 'garbage', token: 'wrong' })).status);
    expect(unnamed).toEqual([...Array(20).fill(401), 429]);
    expect((await send('/v1/nodes', { token: 'wrong' })).status).toBe(429);
  });
});

describe('joins without a token per source address', () => {
  it('a burst of 25 makes 5 pending nodes; the rest are 429 with Retry-After and create nothing', async () => {
    const from = '192.0.2.50';
    const before = (await h.db.select().from(nodes).where(eq(nodes.provisionState, 'pending'))).length;
    const replies = await Promise.all(Array.from({ length: 25 }, () => tokenlessJoin(from)));
    expect(replies.filter((r) => r.status === 201)).toHaveLength(5);
    const limited = replies.filter((r) => r.status === 429);
    expect(limited).toHaveLength(20);
    for (const reply of limited) {
      expect(reply.retryAfter).toBe('10');
      expect(reply.body.error).toMatchObject({ code: 'RATE_LIMITED', details: { retryAfterSeconds: 10 } });
    }
    const after = (await h.db.select().from(nodes).where(eq(nodes.provisionState, 'pending'))).length;
    expect(after - before).toBe(5);

    // A join with a token is not limited, from the same address.
    await seedPool(h, { id: 'pool-rl' });
    const token = await createToken(h, { poolId: 'pool-rl' });
    const withToken = await tokenlessJoin(from, { token: token.secret });
    expect(withToken.status).toBe(201);
    expect(withToken.body.provisionState).toBe('adopted');

    // Another address has its own allowance; after Retry-After this one may join again.
    expect((await tokenlessJoin('192.0.2.51')).status).toBe(201);
    expect((await tokenlessJoin(from)).status).toBe(429);
    clock += 10_000;
    expect((await tokenlessJoin(from)).status).toBe(201);
    expect((await tokenlessJoin(from)).status).toBe(429);
  });

  it('an invalid join body is refused as bad input and spends nothing of the allowance', async () => {
    const from = '192.0.2.60';
    for (let i = 0; i < 10; i++) {
      expect((await send('/v1/agent/join', { from, method: 'POST', body: { hostname: 'x' } })).status).toBe(
        400,
      );
    }
    expect((await tokenlessJoin(from)).status).toBe(201);
  });
});

describe('storage', () => {
  it('is bounded: a row whose bucket is full again goes with a later event; a limited address keeps its row', async () => {
    const sources = ['198.18.0.1', '198.18.0.2', '198.18.0.3'];
    for (const from of sources) expect((await send('/v1/nodes', { from, token: 'wrong' })).status).toBe(401);
    const limited = '198.18.0.9';
    for (let i = 0; i < 21; i++) await send('/v1/nodes', { from: limited, token: 'wrong' });
    const rowsOf = async () =>
      (await h.db.select().from(rateLimits).where(eq(rateLimits.name, 'auth-failures'))).map((r) => r.source);
    expect(await rowsOf()).toEqual(expect.arrayContaining([...sources, limited]));

    // One interval later (2 s) the three single failures are full buckets again: the next event,
    // from anywhere, deletes their rows; the limited address is still 38 s from full and keeps its own.
    clock += 2_001;
    expect((await send('/v1/nodes', { from: '198.18.0.4', token: 'wrong' })).status).toBe(401);
    const left = await rowsOf();
    for (const from of sources) expect(left).not.toContain(from);
    expect(left).toEqual(expect.arrayContaining([limited, '198.18.0.4']));
  });
});
