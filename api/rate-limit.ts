import { BlockList, isIP, isIPv6 } from 'node:net';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import { loadConfig, type Config } from '../config';
import type { Db } from '../db/client';
import { countEvent, type Rate } from '../db/rate-limits';
import { DrydockError } from '../domain/errors';
import type { AppEnv } from './env';
import { toResponse } from './errors';

export interface RateLimitSettings {
  /** 401s answered to one source address; past the limit they are answered 429. */
  authFailures: Rate;
  /** Joins without a token (each creates a pending node) from one source address. */
  tokenlessJoins: Rate;
  /**
   * Peers whose `X-Forwarded-For` is believed (addresses or CIDR subnets). Empty: the header is
   * ignored, since any client can write it — trusted blindly, it would let a client pick a fresh
   * address per request, or spend another address's allowance.
   */
  trustedProxies: string[];
  now?: () => number;
}

/** The limits `config` sets (its defaults: a typo or a stale key never trips them, a scan soon does). */
export function rateLimitsOf(config: Config): RateLimitSettings {
  return {
    authFailures: {
      perMinute: config.DRYDOCK_AUTH_FAILURES_PER_MINUTE,
      burst: config.DRYDOCK_AUTH_FAILURES_BURST,
    },
    tokenlessJoins: {
      perMinute: config.DRYDOCK_TOKENLESS_JOINS_PER_MINUTE,
      burst: config.DRYDOCK_TOKENLESS_JOINS_BURST,
    },
    trustedProxies: config.DRYDOCK_TRUSTED_PROXIES,
  };
}

export const DEFAULT_RATE_LIMITS = rateLimitsOf(loadConfig({}));

/** The source address `app.request()` calls (tests, benchmarks in one process) all share. */
export const IN_PROCESS_ADDRESS = 'in-process';

/** One limit of every API process: its events counted in Postgres (db/rate-limits.ts). */
export class RateLimiter {
  constructor(
    private readonly db: Db,
    private readonly name: string,
    private readonly rate: Rate,
    private readonly now: () => number,
  ) {}

  /** Counts one event from `source`: 0 when allowed, else the whole seconds until one more is. */
  async take(source: string): Promise<number> {
    const now = new Date(this.now());
    const waitMs = await countEvent(this.db, { name: this.name, source, rate: this.rate, now });
    // Rounded to the millisecond first: the interval arithmetic is in floating point.
    return waitMs === 0 ? 0 : Math.max(1, Math.ceil(Math.round(waitMs) / 1000));
  }
}

/** The per-address limits: the same counts for every API process, kept in Postgres. */
export class RateLimits {
  readonly authFailures: RateLimiter;
  readonly tokenlessJoins: RateLimiter;
  private readonly proxies = new BlockList();
  private readonly anyProxy: boolean;

  constructor(db: Db, settings: RateLimitSettings = DEFAULT_RATE_LIMITS) {
    const now = settings.now ?? Date.now;
    this.authFailures = new RateLimiter(db, 'auth-failures', settings.authFailures, now);
    this.tokenlessJoins = new RateLimiter(db, 'tokenless-joins', settings.tokenlessJoins, now);
    for (const proxy of settings.trustedProxies) {
      const [address, prefix] = proxy.split('/') as [string, string | undefined];
      const type = isIPv6(address) ? 'ipv6' : 'ipv4';
      if (prefix === undefined) this.proxies.addAddress(address, type);
      else this.proxies.addSubnet(address, Number(prefix), type);
    }
    this.anyProxy = settings.trustedProxies.length > 0;
  }

  /**
   * The address a request comes from, as a limit key: the connection's peer, or — when the peer
   * is a trusted proxy — the nearest `X-Forwarded-For` hop that is not one. IPv6 counts by /64,
   * the block one host usually holds.
   */
  sourceOf(c: Context<AppEnv>): string {
    // `app.request()` passes no bindings: no connection, no peer.
    if (!c.env) return IN_PROCESS_ADDRESS;
    let address = plain(getConnInfo(c).remote.address ?? 'unknown');
    if (this.anyProxy && this.isProxy(address)) {
      // A proxy appends the peer it saw; only the hops right of the first untrusted one are its.
      const hops = (c.req.header('x-forwarded-for') ?? '')
        .split(',')
        .map((hop) => plain(hop.trim()))
        .filter((hop) => isIP(hop) !== 0);
      while (hops.length > 0 && this.isProxy(address)) address = hops.pop()!;
    }
    return isIPv6(address) ? ipv6Prefix64(address) : address;
  }

  private isProxy(address: string): boolean {
    try {
      return this.proxies.check(address, isIPv6(address) ? 'ipv6' : 'ipv4');
    } catch {
      return false; // not an address at all: never a proxy
    }
  }
}

/** `::ffff:10.0.0.1` is the IPv4 peer 10.0.0.1. */
function plain(address: string): string {
  return address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
}

function ipv6Prefix64(address: string): string {
  const [head, tail = ''] = address.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = address.includes('::') && tail ? tail.split(':') : [];
  const groups = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

export function rateLimited(retryAfterSeconds: number, message: string): DrydockError {
  return new DrydockError('RATE_LIMITED', message, { retryAfterSeconds });
}

/**
 * Counts every 401 against its source address; past the limit the refusal is 429 instead.
 * Requests with valid credentials are always served, whatever their address's count: agents of a
 * rack share one NAT address, and one misconfigured machine must not lock out the others. Secrets
 * are 32 random bytes, so slowing guesses is not what this is for; it tells a misbehaving client
 * to back off. Any RATE_LIMITED answer carries `Retry-After`. Called on every answer by the app's
 * first middleware (api/app.ts), once the rest of the stack made it.
 */
export async function limitFailedAuthentications(c: Context<AppEnv>): Promise<void> {
  let refusal = c.error;
  if (c.res.status === 401) {
    const { rateLimits } = c.get('deps');
    let wait = 0;
    try {
      wait = await rateLimits.authFailures.take(rateLimits.sourceOf(c));
    } catch (error) {
      // The count could not be kept (Postgres unreachable): the answer says so, as any other would.
      c.res = toResponse(error, c);
      return;
    }
    if (wait > 0) {
      refusal = rateLimited(wait, `too many failed authentications from this address; retry in ${wait} s`);
      c.res = toResponse(refusal, c);
    }
  }
  if (refusal instanceof DrydockError && refusal.code === 'RATE_LIMITED') {
    c.header('Retry-After', String(refusal.details.retryAfterSeconds));
  }
}
