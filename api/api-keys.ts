import { and, eq, gt, isNull, or, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { apiKeys } from '../db/schema';
import type { Principal } from '../domain/principal';
import type { NodeWakeups } from './node-events';

/** Resolved keys kept at most; past it the least recently used is forgotten. */
const MAX_ENTRIES = 10_000;

type KeyPrincipal = Extract<Principal, { kind: 'operator' | 'tenant' }>;

interface Entry {
  principal: KeyPrincipal;
  /** The end of a rotation grace (epoch ms); null while the key is not revoked at all. */
  revokedAt: number | null;
}

/**
 * Resolves API key secrets (by their hash) to the caller they stand for. Operators and tenant
 * clients call often, so an answer is kept until it may have changed: a Postgres trigger
 * (migration 0011) names the key on the key channel whenever a committed change touches its row
 * (revoked, rotated, deleted), whichever process made it, and the key is forgotten here. The
 * process that revoked it forgets it at once (`forget`), so its next request is refused. When the
 * LISTEN (re)starts, NOTIFYs may have been missed, and everything is forgotten. A key in its
 * rotation grace is kept with the grace's end and looked up again once it passed, so Postgres's
 * clock decides. Unknown secrets are not kept: a stream of them cannot push the valid ones out.
 */
export class ApiKeys {
  private readonly cache = new Map<string, Entry>();
  private readonly hashesByKey = new Map<string, string>();
  /** Counts forgets: a lookup that one overtook does not cache what it read before it. */
  private forgets = 0;

  constructor(
    private readonly db: Db,
    wakeups: NodeWakeups,
  ) {
    wakeups.onWake((keyId) => this.forget(keyId));
    wakeups.onListen(() => this.forgetAll());
  }

  /** The key's caller: at once when cached (no promise, no turn of the event loop), else read. */
  resolve(hash: string): KeyPrincipal | null | Promise<KeyPrincipal | null> {
    const hit = this.cache.get(hash);
    if (hit === undefined || (hit.revokedAt !== null && hit.revokedAt <= Date.now())) {
      return this.lookUp(hash);
    }
    // Most recently used last: eviction takes the first.
    this.cache.delete(hash);
    this.cache.set(hash, hit);
    return hit.principal;
  }

  /** Forgets the key (this process changed it; the NOTIFY tells the others). */
  forget(keyId: string): void {
    this.forgets++;
    const hash = this.hashesByKey.get(keyId);
    if (hash === undefined) return;
    this.hashesByKey.delete(keyId);
    this.cache.delete(hash);
  }

  private forgetAll(): void {
    this.forgets++;
    this.cache.clear();
    this.hashesByKey.clear();
  }

  private async lookUp(hash: string): Promise<KeyPrincipal | null> {
    const asked = this.forgets;
    const [key] = await this.db
      .select()
      .from(apiKeys)
      // A revocation time still ahead is a rotation grace: the old secret works until then.
      .where(
        and(eq(apiKeys.secretHash, hash), or(isNull(apiKeys.revokedAt), gt(apiKeys.revokedAt, sql`now()`))),
      );
    if (!key) {
      this.forgetHash(hash);
      return null;
    }
    // Shared by every request of the key: frozen, so none can change what the next one sees.
    const principal: KeyPrincipal = Object.freeze(
      key.tenantId
        ? {
            kind: 'tenant',
            keyId: key.id,
            name: key.name,
            tenantId: key.tenantId,
            actions: Object.freeze(key.actions) as string[],
          }
        : { kind: 'operator', keyId: key.id, name: key.name },
    );
    if (asked === this.forgets)
      this.remember(hash, { principal, revokedAt: key.revokedAt?.getTime() ?? null });
    return principal;
  }

  private remember(hash: string, entry: Entry): void {
    this.cache.delete(hash);
    this.cache.set(hash, entry);
    const previous = this.hashesByKey.get(entry.principal.keyId);
    if (previous !== undefined && previous !== hash) this.cache.delete(previous);
    this.hashesByKey.set(entry.principal.keyId, hash);
    if (this.cache.size <= MAX_ENTRIES) return;
    const [oldest, evicted] = this.cache.entries().next().value!;
    this.cache.delete(oldest);
    this.hashesByKey.delete(evicted.principal.keyId);
  }

  /** A cached answer the database no longer gives (its grace ended) goes. */
  private forgetHash(hash: string): void {
    const entry = this.cache.get(hash);
    if (!entry) return;
    this.cache.delete(hash);
    this.hashesByKey.delete(entry.principal.keyId);
  }
}
