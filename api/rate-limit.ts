import { BlockList, isIP, isIPv6 } from 'node:net';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import { loadConfig, type Config } from '../config';
import { DrydockError } from '../domain/errors';
import type { AppEnv } from './env';
import { toResponse } from './errors';

/** A token bucket: `burst` at once, then `perMinute` spread over the minute. */
export interface RateLimit {
  perMinute: number;
  burst: number;
}

export interface RateLimitSettings {
  /** 401s answered to one source address; past the limit they are answered 429. */
  authFailures: RateLimit;
  /** Joins without a token (each creates a pending node) from one source address. */
  tokenlessJoins: RateLimit;
  /**
   * Peers whose `X-Forwarded-For` is believed (addresses or CIDR subnets). Empty: the header is
   * ignored, since any client can write it — trusted blindly, it would let a client pick a fresh
   * address per request, or spend another address's allowance.
   */
  trustedProxies: string[];
  /** Addresses remembered per limit; the least recently seen is forgotten first (bounded memory). */
  maxAddresses?: number;
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

/** One limit's buckets, by address key. */
export class AddressBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly limit: RateLimit,
    private readonly maxAddresses: number,
    private readonly now: () => number,
  ) {}

  /** Takes one token for `key`: 0 when allowed, else the seconds until one is back. */
  take(key: string): number {
    const now = this.now();
    const ratePerMs = this.limit.perMinute / 60_000;
    const previous = this.buckets.get(key);
    const tokens = previous
      ? Math.min(this.limit.burst, previous.tokens + (now - previous.at) * ratePerMs)
      : this.limit.burst;
    // Re-inserted, so the map's order is least recently seen first.
    this.buckets.delete(key);
    if (this.buckets.size >= this.maxAddresses) this.buckets.delete(this.buckets.keys().next().value!);
    if (tokens >= 1) {
      this.buckets.set(key, { tokens: tokens - 1, at: now });
      return 0;
    }
    this.buckets.set(key, { tokens, at: now });
    return Math.max(1, Math.ceil((1 - tokens) / ratePerMs / 1000));
  }
}

/** The per-address limits of one API process (in memory: each process limits on its own). */
export class RateLimits {
  readonly authFailures: AddressBuckets;
  readonly tokenlessJoins: AddressBuckets;
  private readonly proxies = new BlockList();
  private readonly anyProxy: boolean;

  constructor(settings: RateLimitSettings = DEFAULT_RATE_LIMITS) {
    const now = settings.now ?? Date.now;
    const max = settings.maxAddresses ?? 10_000;
    this.authFailures = new AddressBuckets(settings.authFailures, max, now);
    this.tokenlessJoins = new AddressBuckets(settings.tokenlessJoins, max, now);
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
export function limitFailedAuthentications(c: Context<AppEnv>): void {
  let refusal = c.error;
  if (c.res.status === 401) {
    const wait = c.get('deps').rateLimits.authFailures.take(c.get('deps').rateLimits.sourceOf(c));
    if (wait > 0) {
      refusal = rateLimited(wait, `too many failed authentications from this address; retry in ${wait} s`);
      c.res = toResponse(refusal, c);
    }
  }
  if (refusal instanceof DrydockError && refusal.code === 'RATE_LIMITED') {
    c.header('Retry-After', String(refusal.details.retryAfterSeconds));
  }
}
