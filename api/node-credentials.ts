import { renewAfter } from '../domain/credentials';
import { hashSecret } from '../domain/secrets';
import type { Db } from '../db/client';
import { firstUse } from '../db/credential-renewal';
import { nodeOfCredential } from '../db/identity';
import type { NodeRow } from '../db/nodes';
import type { Principal } from '../domain/principal';
import type { NodeWakeups } from './node-events';

/**
 * Resolved credentials kept at most; past it the first in the cache's order is forgotten: one not
 * used while the newest half of the cache was placed (see `resolve`).
 */
const MAX_ENTRIES = 100_000;

/** The principal is built once with the answer: every call with the credential acts as it. */
export type Credential = {
  node: NodeRow;
  principal: Readonly<Extract<Principal, { kind: 'node' }>>;
  /** When the credential ends (epoch ms): past it, CREDENTIAL_EXPIRED. */
  expiresAt: number;
  /** The heartbeat answer's `credential`, built once: when it ends and when to renew it. */
  lifetime: Readonly<{ expiresAt: string; renewAfter: string }>;
};
type Resolved = Credential | null;
/** A cached credential, and the count of placements (`NodeCredentials.placements`) it was placed at. */
type Entry = { credential: Credential; placed: number };

/**
 * Resolves agent credentials to their node. Agents call often (heartbeats, long-polls), so an
 * answer is kept until it may have changed: Postgres triggers name the node on the node channel
 * whenever a committed change touches what the answer holds (the node's version, generation or
 * deletion; any of its credentials), whichever process made it, and the node is forgotten here.
 * When the LISTEN (re)starts, NOTIFYs may have been missed, and everything is forgotten. A revoked
 * credential is refused as soon as the NOTIFY arrives, well within the one second of the spec.
 */
export class NodeCredentials {
  /**
   * By the secret's hash, not the secret: a heap snapshot or core dump of the API then holds no
   * credential an agent could be impersonated with (one SHA-256 per call is the price).
   */
  private readonly cache = new Map<string, Entry>();
  /** Entries put at the end of the cache's order so far: new ones, and used ones moved there. */
  private placements = 0;
  private readonly hashesByNode = new Map<string, Set<string>>();
  /** Counts wake-ups, so a lookup that a wake-up overtook does not cache what it read before it. */
  private wakeups = 0;
  /** The last wake-up of each node woken while lookups are in flight (none in flight: none kept). */
  private readonly wokenAt = new Map<string, number>();
  private inFlight = 0;
  /** Lookups that started before this count may have missed a wake-up: they are not cached. */
  private forgottenAt = 0;

  constructor(
    private readonly db: Db,
    wakeups: NodeWakeups,
  ) {
    wakeups.onWake((nodeId) => this.forgetNode(nodeId));
    wakeups.onListen(() => this.forgetAll());
  }

  /**
   * The credential's node: at once from the cache (no promise, so an agent's call with a cached
   * credential costs no extra turn of the event loop), else read from Postgres.
   */
  resolve(secret: string): Resolved | Promise<Resolved> {
    const hash = hashSecret(secret);
    const hit = this.cache.get(hash);
    if (hit === undefined) return this.lookUp(hash, secret);
    // Recently used ones last, as eviction takes the first. A hit moves only once more than half
    // the cache was placed after it: moving it on every call would cost two more map lookups, and
    // while agents only beat again (no new credentials) nothing falls back, so nothing moves.
    if (this.placements - hit.placed > this.cache.size / 2) this.place(hash, hit);
    return hit.credential;
  }

  /** Puts the entry last in the cache's order (a Map keeps an updated key where it was). */
  private place(hash: string, entry: Entry): void {
    this.cache.delete(hash);
    entry.placed = ++this.placements;
    this.cache.set(hash, entry);
  }

  private async lookUp(hash: string, secret: string): Promise<Resolved> {
    const asked = this.wakeups;
    this.inFlight++;
    let row;
    try {
      row = await nodeOfCredential(this.db, secret);
    } finally {
      if (--this.inFlight === 0) this.wokenAt.clear();
    }
    // An unknown or revoked secret is not kept: a stream of them cannot push the valid ones out.
    if (!row) return null;
    if (row.renewedFrom !== null && row.firstUsedAt === null)
      await firstUse(this.db, row.credentialId, row.renewedFrom);
    const principal = Object.freeze({
      kind: 'node' as const,
      nodeId: row.node.id,
      credentialId: row.credentialId,
      name: row.node.hostname,
    });
    const value = {
      node: row.node,
      principal,
      expiresAt: row.expiresAt.getTime(),
      lifetime: Object.freeze({
        expiresAt: row.expiresAt.toISOString(),
        renewAfter: renewAfter(row.createdAt, row.expiresAt).toISOString(),
      }),
    };
    const overtaken = asked < this.forgottenAt || (this.wokenAt.get(value.node.id) ?? 0) > asked;
    if (!overtaken) this.remember(hash, value);
    return value;
  }

  private remember(hash: string, value: Credential): void {
    this.place(hash, { credential: value, placed: 0 });
    let hashes = this.hashesByNode.get(value.node.id);
    if (!hashes) this.hashesByNode.set(value.node.id, (hashes = new Set()));
    hashes.add(hash);
    if (this.cache.size <= MAX_ENTRIES) return;
    const [oldest, evicted] = this.cache.entries().next().value!;
    this.cache.delete(oldest);
    const siblings = this.hashesByNode.get(evicted.credential.node.id);
    siblings?.delete(oldest);
    if (siblings?.size === 0) this.hashesByNode.delete(evicted.credential.node.id);
  }

  private forgetNode(nodeId: string): void {
    this.wakeups++;
    if (this.inFlight > 0) this.wokenAt.set(nodeId, this.wakeups);
    // Past the bound, every lookup in flight counts as overtaken.
    if (this.wokenAt.size > MAX_ENTRIES) {
      this.wokenAt.clear();
      this.forgottenAt = this.wakeups;
    }
    for (const hash of this.hashesByNode.get(nodeId) ?? []) this.cache.delete(hash);
    this.hashesByNode.delete(nodeId);
  }

  private forgetAll(): void {
    this.forgottenAt = ++this.wakeups;
    this.wokenAt.clear();
    this.cache.clear();
    this.hashesByNode.clear();
  }
}
